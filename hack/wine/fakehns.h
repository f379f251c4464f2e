/*
 * A scriptable stand-in for HNS's client DLLs (computenetwork.dll and
 * vmcompute.dll) that Wine lacks, so hcn's real code paths (handles, result
 * buffers, HRESULT decoding, hcn's error types) run in the Windows tests.
 * It holds no objects: each call is steered by environment variables the test
 * sets in its own process, and it records what it was called with.
 *
 *   HNSPROXY_FAKE_FAIL_OP   function name that fails ("*" = all), an
 *                           HcnClose* too
 *   HNSPROXY_FAKE_HRESULT   the HRESULT it returns, hex (e.g. 803b0013)
 *   HNSPROXY_FAKE_RESULT    the error document put in the result buffer
 *   HNSPROXY_FAKE_IDS       JSON array of GUIDs Enumerate* returns ("[]"); an
 *                           enumeration filtered on an ID returns that ID if
 *                           this has it
 *   HNSPROXY_FAKE_OBJECT    JSON document Query* returns ("{}")
 *   HNSPROXY_FAKE_HNSCALL   response HNSCall returns
 *   HNSPROXY_FAKE_GONE      a GUID deleted after an enumeration listed it:
 *                           HcnOpen* of it answers HNSPROXY_FAKE_GONE_HRESULT
 *                           (hex, default 80070490, ERROR_NOT_FOUND), and an
 *                           HcnEnumerate* filtered on its ID lists nothing
 *   HNSPROXY_FAKE_CALLS     (written) every function called, comma separated
 *   HNSPROXY_FAKE_SENT      (written) the last settings document received
 *   HNSPROXY_FAKE_QUERY     (written) the query the last HcnEnumerate* received
 *   HNSPROXY_FAKE_QUIET     set before the first call: every call succeeds at
 *                           once and records nothing; a kind's Query* returns
 *                           the settings its last Create or Modify was given
 *                           ("{}" before one), Enumerate* HNSPROXY_FAKE_IDS
 *                           as set at its first call ("[]"). Not for
 *                           concurrent callers. So
 *                           hnslb/hcnclient's benchmarks time hcn's code and
 *                           the client's, not this fake's bookkeeping
 *                           (hack/wine-test.sh --bench)
 */
#include <windows.h>
#include <objbase.h>
#include <wchar.h>

#define ENV_MAX 32767

static LPWSTR fake_dup(LPCWSTR s)
{
    size_t n = (wcslen(s) + 1) * sizeof(WCHAR);
    LPWSTR out = CoTaskMemAlloc(n);
    if (out)
        memcpy(out, s, n);
    return out;
}

/* fake_env returns the variable's value in a static buffer, or def. */
static LPCWSTR fake_env(LPCWSTR name, LPCWSTR def)
{
    static WCHAR buf[ENV_MAX];
    DWORD n = GetEnvironmentVariableW(name, buf, ENV_MAX);
    return (n == 0 || n >= ENV_MAX) ? def : buf;
}

static void fake_record(LPCWSTR op)
{
    static WCHAR calls[ENV_MAX];
    DWORD n = GetEnvironmentVariableW(L"HNSPROXY_FAKE_CALLS", calls, ENV_MAX);
    if (n >= ENV_MAX)
        n = 0;
    calls[n] = 0;
    if (n + wcslen(op) + 2 < ENV_MAX) {
        if (n > 0)
            wcscat(calls, L",");
        wcscat(calls, op);
    }
    SetEnvironmentVariableW(L"HNSPROXY_FAKE_CALLS", calls);
}

/* fake_call records op and returns the HRESULT the test asked for. */
static HRESULT fake_call(LPCWSTR op, LPWSTR *result)
{
    LPCWSTR fail;
    fake_record(op);
    if (result)
        *result = NULL;
    fail = fake_env(L"HNSPROXY_FAKE_FAIL_OP", L"");
    if (wcscmp(fail, L"*") != 0 && wcscmp(fail, op) != 0)
        return S_OK;
    if (result && GetEnvironmentVariableW(L"HNSPROXY_FAKE_RESULT", NULL, 0) > 0)
        *result = fake_dup(fake_env(L"HNSPROXY_FAKE_RESULT", L""));
    return (HRESULT)wcstoul(fake_env(L"HNSPROXY_FAKE_HRESULT", L"80004005"), NULL, 16);
}

/* fake_quiet reports whether HNSPROXY_FAKE_QUIET was set at the first call. */
static inline BOOL fake_quiet(void)
{
    static int quiet = -1;
    if (quiet < 0)
        quiet = GetEnvironmentVariableW(L"HNSPROXY_FAKE_QUIET", NULL, 0) > 0;
    return quiet;
}

/* fake_quiet_ok is a quiet call's answer: success, no error document. */
static inline HRESULT fake_quiet_ok(LPWSTR *result)
{
    if (result)
        *result = NULL;
    return S_OK;
}

/* fake_quiet_keep replaces *kept with a copy of settings: what a quiet
 * Query* of that kind answers next, as HNS answers with what it was given. */
static inline void fake_quiet_keep(LPWSTR *kept, LPCWSTR settings)
{
    CoTaskMemFree(*kept);
    *kept = fake_dup(settings ? settings : L"{}");
}

/* fake_quiet_ids is a copy of HNSPROXY_FAKE_IDS as first read: what a quiet
 * Enumerate* answers. */
static inline LPWSTR fake_quiet_ids(void)
{
    static LPWSTR ids;
    if (!ids)
        ids = fake_dup(fake_env(L"HNSPROXY_FAKE_IDS", L"[]"));
    return ids ? fake_dup(ids) : NULL;
}

/* fake_names reports whether text contains want, ignoring case. */
static inline BOOL fake_names(LPCWSTR text, LPCWSTR want)
{
    size_t n = wcslen(want);
    if (n == 0 || !text)
        return FALSE;
    for (; *text; text++)
        if (_wcsnicmp(text, want, n) == 0)
            return TRUE;
    return FALSE;
}

/* fake_gone reports whether id is HNSPROXY_FAKE_GONE's GUID. */
static inline BOOL fake_gone(const GUID *id)
{
    WCHAR text[39]; /* {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx} */
    if (StringFromGUID2(id, text, 39) != 39)
        return FALSE;
    text[37] = 0;
    return fake_names(text + 1, fake_env(L"HNSPROXY_FAKE_GONE", L""));
}

/* fake_gone_open records op and answers what opening the gone object does. */
static inline HRESULT fake_gone_open(LPCWSTR op, LPWSTR *result)
{
    fake_record(op);
    if (result)
        *result = NULL;
    return (HRESULT)wcstoul(fake_env(L"HNSPROXY_FAKE_GONE_HRESULT", L"80070490"), NULL, 16);
}

/* fake_ids is what an enumeration answers: HNSPROXY_FAKE_IDS; for a query
 * filtered on an ID (hcn's Get*ByID), that ID if HNSPROXY_FAKE_IDS has it
 * and it is not the gone object, else nothing. */
static inline LPWSTR fake_ids(LPCWSTR query)
{
    static const WCHAR key[] = L"ID\\\":\\\""; /* ID\":\" inside hcn's Filter string */
    WCHAR id[37], gone[40], out[41];
    LPCWSTR at = query ? wcsstr(query, key) : NULL;
    if (!at)
        return fake_dup(fake_env(L"HNSPROXY_FAKE_IDS", L"[]"));
    lstrcpynW(id, at + wcslen(key), 37);
    lstrcpynW(gone, fake_env(L"HNSPROXY_FAKE_GONE", L""), 40);
    if (wcslen(id) != 36 || fake_names(id, gone) || !fake_names(fake_env(L"HNSPROXY_FAKE_IDS", L"[]"), id))
        return fake_dup(L"[]");
    wcscpy(out, L"[\"");
    wcscat(out, id);
    wcscat(out, L"\"]");
    return fake_dup(out);
}

/* Marker the tests look for to know they talk to this fake, not to HNS. */
__declspec(dllexport) BOOL WINAPI HnsproxyFakeHns(void) { return TRUE; }
