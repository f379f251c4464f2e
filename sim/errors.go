package sim

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hnsCode is a code HNS returns with the name the counters use and the
// message Windows formats for it: the HCN error code table's text
// (MicrosoftDocs/Virtualization-Documentation, "HCN Error Code") with the
// closing period HNS adds, or Windows' system message for a Win32 code.
type hnsCode struct {
	name    string
	message string
}

var hnsCodes = map[hnslb.ErrorCode]hnsCode{
	hnslb.CodeInvalidParameter:      {"InvalidParameter", "The parameter is incorrect."},
	hnslb.CodeAlreadyExists:         {"AlreadyExists", "Cannot create a file when that file already exists."},
	hnslb.CodeNotFound:              {"NotFound", "Element not found."},
	hnslb.CodeObjectAlreadyExists:   {"ObjectAlreadyExists", "The object already exists."},
	hnslb.CodeTimeout:               {"Timeout", "This operation returned because the timeout period expired."},
	hnslb.CodeRPCServerUnavailable:  {"RPCServerUnavailable", "The RPC server is unavailable."},
	hnslb.CodeNotImplemented:        {"NotImplemented", "Not implemented"},
	hnslb.CodeNetworkNotFound:       {"NetworkNotFound", "The network was not found."},
	hnslb.CodeEndpointNotFound:      {"EndpointNotFound", "The endpoint was not found."},
	hnslb.CodePortNotFound:          {"PortNotFound", "The switch-port was not found."},
	hnslb.CodeInvalidEndpoint:       {"InvalidEndpoint", "The provided endpoint configuration is invalid or missing parameters."},
	hnslb.CodeInvalidPolicy:         {"InvalidPolicy", "The provided policy configuration is invalid or missing parameters."},
	hnslb.CodeNetworkAlreadyExists:  {"NetworkAlreadyExists", "A network with this name already exists."},
	hnslb.CodePortAlreadyExists:     {"PortAlreadyExists", "The specified port already exists."},
	hnslb.CodeEndpointAlreadyAttach: {"EndpointAlreadyAttach", "This endpoint is already attached to the switch."},
	hnslb.CodeRequestUnsupported:    {"RequestUnsupported", "The specified request is unsupported."},
	hnslb.CodeInvalidJSONReference:  {"InvalidJSONReference", "The reference is invalid in the JSON document."},
	hnslb.CodeInvalidIP:             {"InvalidIP", "IP address is either invalid or not part of any configured subnet(s)."},
	hnslb.CodeManagerStopped:        {"ManagerStopped", "Operation cannot be performed while service is stopping."},
	hnslb.CodeAddrInvalidOrReserved: {"AddrInvalidOrReserved", "An address provided is invalid or reserved."},
}

// hnsError builds the *hnslb.Error HNS would return: Windows' message for the
// code, then what the simulator found wrong.
func hnsError(op Op, code hnslb.ErrorCode, format string, args ...any) *hnslb.Error {
	msg := hnsCodes[code].message
	if format != "" {
		detail := fmt.Sprintf(format, args...)
		if msg == "" {
			msg = detail
		} else {
			msg += " " + detail
		}
	}
	return &hnslb.Error{Op: string(op), Code: code, Message: msg}
}

// resultName is how a call's outcome is counted.
func resultName(err error) string {
	if err == nil {
		return ResultOK
	}
	if code, ok := hnslb.CodeOf(err); ok {
		if c, known := hnsCodes[code]; known {
			return c.name
		}
		return fmt.Sprintf("0x%x", uint32(code))
	}
	return "Error"
}
