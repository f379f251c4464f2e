/*
 * Stand-in for vmcompute.dll (HNSCall, which hcn uses for the HNS version)
 * under Wine: bridged to hnssim with HNSPROXY_HNS_BRIDGE set (hnsbridge.h),
 * the unit tests' fake otherwise (fakehns.h).
 */
#include "hnsbridge.h"
#include "fakehns.h"

__declspec(dllexport) HRESULT WINAPI HNSCall(LPCWSTR method, LPCWSTR path, LPCWSTR request, LPWSTR *response)
{
    HRESULT hr;
    if (bridge_enabled()) {
        WCHAR target[512];
        swprintf(target, 512, L"%ls %ls", method ? method : L"", path ? path : L"");
        return bridge_call(L"HNSCall", target, request, response, NULL);
    }
    hr = fake_call(L"HNSCall", NULL);
    *response = SUCCEEDED(hr)
        ? fake_dup(fake_env(L"HNSPROXY_FAKE_HNSCALL", L"{\"Success\":true,\"Output\":{\"Major\":15,\"Minor\":5}}"))
        : NULL;
    return hr;
}
