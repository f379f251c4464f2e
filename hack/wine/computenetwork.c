/*
 * Stand-in for computenetwork.dll (the Hcn* API) under Wine. With
 * HNSPROXY_HNS_BRIDGE set, calls go to hnssim (hnsbridge.h); otherwise it is
 * the scriptable fake of the unit tests (fakehns.h).
 */
#include "hnsbridge.h"
#include "fakehns.h"

/* BRIDGE_HANDLE_CALL returns from a bridged call whose output is a handle. */
#define BRIDGE_HANDLE_CALL(fn, target, doc, h, result)                                     \
    do {                                                                                   \
        LPWSTR out_;                                                                       \
        HRESULT hr_ = bridge_call(fn, target, doc, &out_, result);                         \
        *(h) = bridge_take_handle(hr_, out_);                                              \
        return hr_;                                                                        \
    } while (0)

#define FAKE_OBJECT_API(Kind, Plural)                                                      \
    static LPWSTR quietSent##Kind; /* quiet mode: the last settings received */            \
    __declspec(dllexport) HRESULT WINAPI HcnEnumerate##Plural(LPCWSTR query, LPWSTR *ids, LPWSTR *result) \
    {                                                                                      \
        HRESULT hr;                                                                        \
        if (fake_quiet()) {                                                                \
            fake_quiet_ok(result);                                                         \
            *ids = fake_quiet_ids();                                                       \
            return S_OK;                                                                   \
        }                                                                                  \
        if (bridge_enabled())                                                              \
            return bridge_call(L"HcnEnumerate" L## #Plural, L"", query, ids, result);      \
        SetEnvironmentVariableW(L"HNSPROXY_FAKE_QUERY", query);                            \
        hr = fake_call(L"HcnEnumerate" L## #Plural, result);                               \
        *ids = SUCCEEDED(hr) ? fake_ids(query) : NULL;                                     \
        return hr;                                                                         \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnOpen##Kind(const GUID *id, HANDLE *h, LPWSTR *result) \
    {                                                                                      \
        if (fake_quiet()) {                                                                \
            *h = (HANDLE)1;                                                                \
            return fake_quiet_ok(result);                                                  \
        }                                                                                  \
        if (bridge_enabled()) {                                                            \
            WCHAR guid[39];                                                                \
            bridge_guid(id, guid);                                                         \
            BRIDGE_HANDLE_CALL(L"HcnOpen" L## #Kind, guid, L"", h, result);                \
        }                                                                                  \
        *h = (HANDLE)1;                                                                    \
        if (fake_gone(id))                                                                 \
            return fake_gone_open(L"HcnOpen" L## #Kind, result);                           \
        return fake_call(L"HcnOpen" L## #Kind, result);                                    \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnModify##Kind(HANDLE h, LPCWSTR settings, LPWSTR *result) \
    {                                                                                      \
        if (fake_quiet()) {                                                                \
            fake_quiet_keep(&quietSent##Kind, settings);                                   \
            return fake_quiet_ok(result);                                                  \
        }                                                                                  \
        if (bridge_enabled()) {                                                            \
            WCHAR handle[24];                                                              \
            bridge_handle_text(h, handle);                                                 \
            return bridge_call(L"HcnModify" L## #Kind, handle, settings, NULL, result);    \
        }                                                                                  \
        SetEnvironmentVariableW(L"HNSPROXY_FAKE_SENT", settings);                          \
        return fake_call(L"HcnModify" L## #Kind, result);                                  \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnQuery##Kind##Properties(HANDLE h, LPCWSTR query, LPWSTR *props, LPWSTR *result) \
    {                                                                                      \
        HRESULT hr;                                                                        \
        if (fake_quiet()) {                                                                \
            fake_quiet_ok(result);                                                         \
            *props = fake_dup(quietSent##Kind ? quietSent##Kind : L"{}");                 \
            return S_OK;                                                                   \
        }                                                                                  \
        if (bridge_enabled()) {                                                            \
            WCHAR handle[24];                                                              \
            bridge_handle_text(h, handle);                                                 \
            return bridge_call(L"HcnQuery" L## #Kind L"Properties", handle, query, props, result); \
        }                                                                                  \
        hr = fake_call(L"HcnQuery" L## #Kind L"Properties", result);                       \
        *props = SUCCEEDED(hr) ? fake_dup(fake_env(L"HNSPROXY_FAKE_OBJECT", L"{}")) : NULL; \
        return hr;                                                                         \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnDelete##Kind(const GUID *id, LPWSTR *result)   \
    {                                                                                      \
        if (fake_quiet()) {                                                                \
            return fake_quiet_ok(result);                                                  \
        }                                                                                  \
        if (bridge_enabled()) {                                                            \
            WCHAR guid[39];                                                                \
            bridge_guid(id, guid);                                                         \
            return bridge_call(L"HcnDelete" L## #Kind, guid, L"", NULL, result);           \
        }                                                                                  \
        return fake_call(L"HcnDelete" L## #Kind, result);                                  \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnClose##Kind(HANDLE h)                          \
    {                                                                                      \
        if (fake_quiet())                                                                  \
            return S_OK;                                                                   \
        if (bridge_enabled()) {                                                            \
            WCHAR handle[24];                                                              \
            bridge_handle_text(h, handle);                                                 \
            return bridge_call(L"HcnClose" L## #Kind, handle, L"", NULL, NULL);            \
        }                                                                                  \
        return fake_call(L"HcnClose" L## #Kind, NULL);                                     \
    }

FAKE_OBJECT_API(Network, Networks)
FAKE_OBJECT_API(Endpoint, Endpoints)
FAKE_OBJECT_API(Namespace, Namespaces)
FAKE_OBJECT_API(LoadBalancer, LoadBalancers)

#define FAKE_CREATE(Kind)                                                                  \
    __declspec(dllexport) HRESULT WINAPI HcnCreate##Kind(const GUID *id, LPCWSTR settings, HANDLE *h, LPWSTR *result) \
    {                                                                                      \
        if (fake_quiet()) {                                                                \
            fake_quiet_keep(&quietSent##Kind, settings);                                   \
            *h = (HANDLE)1;                                                                \
            return fake_quiet_ok(result);                                                  \
        }                                                                                  \
        if (bridge_enabled()) {                                                            \
            WCHAR guid[39];                                                                \
            bridge_guid(id, guid);                                                         \
            BRIDGE_HANDLE_CALL(L"HcnCreate" L## #Kind, guid, settings, h, result);         \
        }                                                                                  \
        SetEnvironmentVariableW(L"HNSPROXY_FAKE_SENT", settings);                          \
        *h = (HANDLE)1;                                                                    \
        return fake_call(L"HcnCreate" L## #Kind, result);                                  \
    }

FAKE_CREATE(Network)
FAKE_CREATE(Namespace)
FAKE_CREATE(LoadBalancer)

/* Endpoints are created on an open network handle. */
__declspec(dllexport) HRESULT WINAPI HcnCreateEndpoint(HANDLE network, const GUID *id, LPCWSTR settings, HANDLE *h, LPWSTR *result)
{
    if (fake_quiet()) {
        fake_quiet_keep(&quietSentEndpoint, settings);
        *h = (HANDLE)1;
        return fake_quiet_ok(result);
    }
    if (bridge_enabled()) {
        WCHAR handle[24];
        bridge_handle_text(network, handle);
        BRIDGE_HANDLE_CALL(L"HcnCreateEndpoint", handle, settings, h, result);
    }
    SetEnvironmentVariableW(L"HNSPROXY_FAKE_SENT", settings);
    *h = (HANDLE)1;
    return fake_call(L"HcnCreateEndpoint", result);
}
