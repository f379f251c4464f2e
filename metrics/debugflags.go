package metrics

import (
	"io"
	"net/http"

	"k8s.io/component-base/logs"
)

// maxVerbosityBody bounds what PUT /debug/flags/v reads: a verbosity is a
// few digits, and anything longer is refused by the parse anyway.
const maxVerbosityBody = 64

// putVerbosity is kube-proxy's PUT /debug/flags/v (with --profiling): the
// body is the new log verbosity, set by component-base's logs.GlogSetter,
// with kube-proxy's answers (apiserver's routes.StringFlagPutHandler).
// That routes package is not imported: it links apiserver's OpenAPI and
// storage routes with it, which would grow hnsproxy.exe by about 35 MB.
func putVerbosity(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		writeText(w, http.StatusNotAcceptable, "unsupported http method")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxVerbosityBody+1))
	if err != nil {
		writeText(w, http.StatusBadRequest, "error reading request body: "+err.Error())
		return
	}
	if len(body) > maxVerbosityBody {
		writeText(w, http.StatusBadRequest, "request body too long for a verbosity")
		return
	}
	answer, err := logs.GlogSetter(string(body))
	if err != nil {
		writeText(w, http.StatusBadRequest, err.Error())
		return
	}
	writeText(w, http.StatusOK, answer)
}
