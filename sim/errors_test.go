package sim

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestMessagesAreWindowsText: each code the simulator answers starts its
// message with the text Windows gives for it: the HCN error code table
// (MicrosoftDocs/Virtualization-Documentation, "HCN Error Code"), which HNS
// returns with a closing period, as the errors quoted in public threads
// show; and Windows' system message for a Win32 code or HRESULT.
func TestMessagesAreWindowsText(t *testing.T) {
	want := map[hnslb.ErrorCode]string{
		hnslb.CodeInvalidParameter:      "The parameter is incorrect.",                         // kubernetes/kubernetes#98680
		hnslb.CodeAlreadyExists:         "Cannot create a file when that file already exists.", // kubernetes/kubernetes#139519
		hnslb.CodeNotFound:              "Element not found.",                                  // Azure/azure-container-networking#283
		hnslb.CodeObjectAlreadyExists:   "The object already exists.",                          // kubernetes/kubernetes#74766
		hnslb.CodeTimeout:               "This operation returned because the timeout period expired.",
		hnslb.CodeRPCServerUnavailable:  "The RPC server is unavailable.",
		hnslb.CodeNotImplemented:        "Not implemented",
		hnslb.CodeNetworkNotFound:       "The network was not found.",
		hnslb.CodeEndpointNotFound:      "The endpoint was not found.",
		hnslb.CodePortNotFound:          "The switch-port was not found.", // microsoft/hcsshim#1043
		hnslb.CodeInvalidEndpoint:       "The provided endpoint configuration is invalid or missing parameters.",
		hnslb.CodeInvalidPolicy:         "The provided policy configuration is invalid or missing parameters.", // aws/containers-roadmap#240
		hnslb.CodeNetworkAlreadyExists:  "A network with this name already exists.",                            // kubernetes-sigs/sig-windows-tools#249
		hnslb.CodePortAlreadyExists:     "The specified port already exists.",                                  // kubernetes/community#8883
		hnslb.CodeEndpointAlreadyAttach: "This endpoint is already attached to the switch.",                    // projectcalico/cni-plugin#988
		hnslb.CodeRequestUnsupported:    "The specified request is unsupported.",
		hnslb.CodeInvalidJSONReference:  "The reference is invalid in the JSON document.",                        // kubernetes/kubernetes#100384
		hnslb.CodeInvalidIP:             "IP address is either invalid or not part of any configured subnet(s).", // kubernetes-sigs/sig-windows-tools#250
		hnslb.CodeManagerStopped:        "Operation cannot be performed while service is stopping.",
		hnslb.CodeAddrInvalidOrReserved: "An address provided is invalid or reserved.", // kubernetes/kubernetes#100962
	}
	for code, c := range hnsCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("0x%x (%s): no Windows text pinned here", uint32(code), c.name)
			continue
		}
		if got := hnsError(OpCreateLoadBalancer, code, "").Message; got != w {
			t.Errorf("0x%x (%s): message %q, Windows says %q", uint32(code), c.name, got, w)
		}
	}
}
