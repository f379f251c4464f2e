/* Fake computenetwork.dll (the Hcn* API) for Wine; see fakehns.h. */
#include "fakehns.h"

#define FAKE_OBJECT_API(Kind, Plural)                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnEnumerate##Plural(LPCWSTR query, LPWSTR *ids, LPWSTR *result) \
    {                                                                                      \
        HRESULT hr = fake_call(L"HcnEnumerate" L## #Plural, result);                       \
        *ids = SUCCEEDED(hr) ? fake_dup(fake_env(L"HNSPROXY_FAKE_IDS", L"[]")) : NULL;    \
        return hr;                                                                         \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnOpen##Kind(const GUID *id, HANDLE *h, LPWSTR *result) \
    {                                                                                      \
        *h = (HANDLE)1;                                                                    \
        return fake_call(L"HcnOpen" L## #Kind, result);                                    \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnModify##Kind(HANDLE h, LPCWSTR settings, LPWSTR *result) \
    {                                                                                      \
        SetEnvironmentVariableW(L"HNSPROXY_FAKE_SENT", settings);                          \
        return fake_call(L"HcnModify" L## #Kind, result);                                  \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnQuery##Kind##Properties(HANDLE h, LPCWSTR query, LPWSTR *props, LPWSTR *result) \
    {                                                                                      \
        HRESULT hr = fake_call(L"HcnQuery" L## #Kind L"Properties", result);               \
        *props = SUCCEEDED(hr) ? fake_dup(fake_env(L"HNSPROXY_FAKE_OBJECT", L"{}")) : NULL; \
        return hr;                                                                         \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnDelete##Kind(const GUID *id, LPWSTR *result)  \
    {                                                                                      \
        return fake_call(L"HcnDelete" L## #Kind, result);                                  \
    }                                                                                      \
    __declspec(dllexport) HRESULT WINAPI HcnClose##Kind(HANDLE h)                          \
    {                                                                                      \
        fake_record(L"HcnClose" L## #Kind);                                                \
        return S_OK;                                                                       \
    }

FAKE_OBJECT_API(Network, Networks)
FAKE_OBJECT_API(Endpoint, Endpoints)
FAKE_OBJECT_API(Namespace, Namespaces)
FAKE_OBJECT_API(LoadBalancer, LoadBalancers)

#define FAKE_CREATE(Kind)                                                                  \
    __declspec(dllexport) HRESULT WINAPI HcnCreate##Kind(const GUID *id, LPCWSTR settings, HANDLE *h, LPWSTR *result) \
    {                                                                                      \
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
    SetEnvironmentVariableW(L"HNSPROXY_FAKE_SENT", settings);
    *h = (HANDLE)1;
    return fake_call(L"HcnCreateEndpoint", result);
}
