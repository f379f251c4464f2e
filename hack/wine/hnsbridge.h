/*
 * Bridge mode of the HNS client DLL stand-ins: when HNSPROXY_HNS_BRIDGE is
 * set (host:port of `hnssim serve --bridge`, loopback), every Hcn* and HNSCall
 * call goes to hnssim over TCP and returns hnssim's HRESULT, output and
 * error document as HNS would. One connection per call; three netstrings
 * (`<len>:<bytes>,`) each way, UTF-8:
 *
 *   request:  function name, target, document
 *   response: HRESULT (8 hex digits), output, result (error document)
 *
 * target is the object's GUID (open, create, delete), a handle number the
 * bridge gave out (query, modify, close; a network's for an endpoint's
 * create) or "METHOD path" (HNSCall). docs/windows-testing.md has the rest.
 */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <objbase.h>
#include <wchar.h>
#include <stdio.h>
#include <stdlib.h>

#define BRIDGE_ENV L"HNSPROXY_HNS_BRIDGE"
#define BRIDGE_MAX_FIELD (64u << 20)
/* What an RPC to a stopped HNS fails with: HRESULT_FROM_WIN32(RPC_S_SERVER_UNAVAILABLE). */
#define BRIDGE_E_UNAVAILABLE ((HRESULT)0x800706BAL)
/* A reply the DLL cannot read: HRESULT_FROM_WIN32(RPC_S_CALL_FAILED). */
#define BRIDGE_E_CALL_FAILED ((HRESULT)0x800706BEL)

static BOOL bridge_enabled(void)
{
    return GetEnvironmentVariableW(BRIDGE_ENV, NULL, 0) > 0;
}

/* bridge_utf8 converts s (NULL: empty) to a malloc'd UTF-8 string. */
static char *bridge_utf8(LPCWSTR s, int *len)
{
    int n;
    char *out;
    if (!s)
        s = L"";
    n = WideCharToMultiByte(CP_UTF8, 0, s, -1, NULL, 0, NULL, NULL);
    out = malloc(n > 0 ? n : 1);
    if (!out)
        return NULL;
    out[0] = 0;
    if (n > 0)
        WideCharToMultiByte(CP_UTF8, 0, s, -1, out, n, NULL, NULL);
    *len = (int)strlen(out);
    return out;
}

/* bridge_wide converts len UTF-8 bytes to a CoTaskMemAlloc'd wide string. */
static LPWSTR bridge_wide(const char *s, int len)
{
    int n = len > 0 ? MultiByteToWideChar(CP_UTF8, 0, s, len, NULL, 0) : 0;
    LPWSTR out = CoTaskMemAlloc((n + 1) * sizeof(WCHAR));
    if (!out)
        return NULL;
    if (n > 0)
        MultiByteToWideChar(CP_UTF8, 0, s, len, out, n);
    out[n] = 0;
    return out;
}

static BOOL bridge_send_all(SOCKET s, const char *p, int n)
{
    while (n > 0) {
        int k = send(s, p, n, 0);
        if (k <= 0)
            return FALSE;
        p += k;
        n -= k;
    }
    return TRUE;
}

static BOOL bridge_send_field(SOCKET s, LPCWSTR field)
{
    char head[16];
    int len, ok;
    char *utf8 = bridge_utf8(field, &len);
    if (!utf8)
        return FALSE;
    snprintf(head, sizeof head, "%d:", len);
    ok = bridge_send_all(s, head, (int)strlen(head)) && bridge_send_all(s, utf8, len) && bridge_send_all(s, ",", 1);
    free(utf8);
    return ok;
}

/* bridge_connect connects to HNSPROXY_HNS_BRIDGE, or returns INVALID_SOCKET. */
static SOCKET bridge_connect(void)
{
    static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
    char addr[256], *colon;
    struct addrinfo hints = {0}, *ai = NULL, *a;
    SOCKET s = INVALID_SOCKET;
    WSADATA wsa;
    BOOL pending;

    if (InitOnceBeginInitialize(&once, 0, &pending, NULL) && pending) {
        WSAStartup(MAKEWORD(2, 2), &wsa);
        InitOnceComplete(&once, 0, NULL);
    }
    if (GetEnvironmentVariableA("HNSPROXY_HNS_BRIDGE", addr, sizeof addr) >= sizeof addr)
        return INVALID_SOCKET;
    colon = strrchr(addr, ':');
    if (!colon)
        return INVALID_SOCKET;
    *colon = 0;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(addr, colon + 1, &hints, &ai) != 0)
        return INVALID_SOCKET;
    for (a = ai; a && s == INVALID_SOCKET; a = a->ai_next) {
        s = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (s != INVALID_SOCKET && connect(s, a->ai_addr, (int)a->ai_addrlen) != 0) {
            closesocket(s);
            s = INVALID_SOCKET;
        }
    }
    freeaddrinfo(ai);
    return s;
}

/* bridge_read_all reads the whole reply (the server closes after it). */
static char *bridge_read_all(SOCKET s, int *len)
{
    int cap = 4096, n = 0, k;
    char *buf = malloc(cap), *grown;
    while (buf) {
        if (n == cap) {
            if (cap >= (int)(3 * BRIDGE_MAX_FIELD))
                break;
            grown = realloc(buf, cap * 2);
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
        k = recv(s, buf + n, cap - n, 0);
        if (k < 0)
            break;
        if (k == 0) {
            *len = n;
            return buf;
        }
        n += k;
    }
    free(buf);
    return NULL;
}

/* bridge_field parses one netstring at *p (end at end) into *start, *flen. */
static BOOL bridge_field(const char **p, const char *end, const char **start, int *flen)
{
    unsigned long n = 0;
    const char *q = *p;
    while (q < end && *q >= '0' && *q <= '9' && n <= BRIDGE_MAX_FIELD)
        n = n * 10 + (unsigned long)(*q++ - '0');
    if (q == *p || q >= end || *q != ':' || n > BRIDGE_MAX_FIELD || (unsigned long)(end - q - 1) < n + 1 || q[1 + n] != ',')
        return FALSE;
    *start = q + 1;
    *flen = (int)n;
    *p = q + 2 + n;
    return TRUE;
}

/*
 * bridge_call sends fn(target, doc) to hnssim and returns its HRESULT. The
 * output and the error document (when non-empty) are CoTaskMemAlloc'd wide
 * strings in *out and *result (either pointer may be NULL: not wanted).
 */
static HRESULT bridge_call(LPCWSTR fn, LPCWSTR target, LPCWSTR doc, LPWSTR *out, LPWSTR *result)
{
    SOCKET s;
    char *reply, hex[9];
    const char *p, *end, *f[3];
    int len = 0, flen[3], i;
    HRESULT hr;

    if (out)
        *out = NULL;
    if (result)
        *result = NULL;
    s = bridge_connect();
    if (s == INVALID_SOCKET)
        return BRIDGE_E_UNAVAILABLE;
    if (!bridge_send_field(s, fn) || !bridge_send_field(s, target) || !bridge_send_field(s, doc)) {
        closesocket(s);
        return BRIDGE_E_UNAVAILABLE;
    }
    shutdown(s, SD_SEND);
    reply = bridge_read_all(s, &len);
    closesocket(s);
    if (!reply)
        return BRIDGE_E_CALL_FAILED;
    p = reply;
    end = reply + len;
    for (i = 0; i < 3; i++) {
        if (!bridge_field(&p, end, &f[i], &flen[i])) {
            free(reply);
            return BRIDGE_E_CALL_FAILED;
        }
    }
    if (flen[0] != 8) {
        free(reply);
        return BRIDGE_E_CALL_FAILED;
    }
    memcpy(hex, f[0], 8);
    hex[8] = 0;
    hr = (HRESULT)strtoul(hex, NULL, 16);
    if (out && flen[1] > 0)
        *out = bridge_wide(f[1], flen[1]);
    if (result && flen[2] > 0)
        *result = bridge_wide(f[2], flen[2]);
    free(reply);
    return hr;
}

/* bridge_guid formats id the way hcn's guid package does (no braces). */
static inline void bridge_guid(const GUID *id, WCHAR out[39])
{
    WCHAR braced[40];
    if (!id || StringFromGUID2(id, braced, 40) != 39) {
        out[0] = 0;
        return;
    }
    memcpy(out, braced + 1, 36 * sizeof(WCHAR));
    out[36] = 0;
}

/* bridge_handle_text writes a handle number the bridge gave out. */
static inline void bridge_handle_text(HANDLE h, WCHAR out[24])
{
    swprintf(out, 24, L"%llu", (unsigned long long)(ULONG_PTR)h);
}

/* bridge_take_handle turns the output of an open or create into a handle. */
static inline HANDLE bridge_take_handle(HRESULT hr, LPWSTR out)
{
    HANDLE h = NULL;
    if (SUCCEEDED(hr) && out)
        h = (HANDLE)(ULONG_PTR)wcstoull(out, NULL, 10);
    if (out)
        CoTaskMemFree(out);
    return h;
}
