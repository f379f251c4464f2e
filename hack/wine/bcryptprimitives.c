/*
 * bcryptprimitives.dll shim for Wine 8: exports ProcessPrng, which the Go
 * runtime (>= 1.24) requires on Windows and Wine 8 lacks. It fills the buffer
 * from BCryptGenRandom with the system-preferred RNG, which Wine implements.
 * Test use only; installed into a private WINEPREFIX by hack/wine-test.sh.
 */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* BCryptGenRandom takes a ULONG length; feed large requests in chunks. */
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    /* Windows documents ProcessPrng as always returning TRUE. */
    return TRUE;
}
