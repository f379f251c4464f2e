/* Fake vmcompute.dll (HNSCall, which hcn uses for the HNS version); see fakehns.h. */
#include "fakehns.h"

__declspec(dllexport) HRESULT WINAPI HNSCall(LPCWSTR method, LPCWSTR path, LPCWSTR request, LPWSTR *response)
{
    HRESULT hr = fake_call(L"HNSCall", NULL);
    *response = SUCCEEDED(hr)
        ? fake_dup(fake_env(L"HNSPROXY_FAKE_HNSCALL", L"{\"Success\":true,\"Output\":{\"Major\":15,\"Minor\":5}}"))
        : NULL;
    return hr;
}
