package remote_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestMalformedRequests is hnssim's part of the bad-input table: broken
// documents, wrong shapes and junk IDs get an HNS error with the code
// real HNS (or hcn, before calling it) gives, and change nothing.
func TestMalformedRequests(t *testing.T) {
	h, ids := seededSim(t)
	srv := remote.NewServer(h, remote.Extras{Dump: h.Snapshot})
	lbID := ids[4]
	before, err := json.Marshal(h.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code                     hnslb.ErrorCode
	}{
		{"truncated JSON", "POST", "/loadbalancers", `{"PortMappings":[{"Protocol":6`, 400, hnslb.CodeInvalidParameter},
		{"not JSON", "POST", "/networks", "\xff\xfe<xml/>", 400, hnslb.CodeInvalidParameter},
		{"empty body", "POST", "/namespaces", ``, 400, hnslb.CodeInvalidParameter},
		{"array for an object", "POST", "/loadbalancers", `[]`, 400, hnslb.CodeInvalidParameter},
		{"string for a number", "POST", "/loadbalancers", `{"Flags":"DSR"}`, 400, hnslb.CodeInvalidParameter},
		{"number out of range", "POST", "/loadbalancers", `{"PortMappings":[{"ExternalPort":70000}]}`, 400, hnslb.CodeInvalidParameter},
		{"null document", "POST", "/loadbalancers", `null`, 400, hnslb.CodeInvalidParameter},
		{"no port mapping", "POST", "/loadbalancers", `{"HostComputeEndpoints":["` + ids[1] + `"]}`, 400, hnslb.CodeInvalidParameter},
		{"policy settings not an object", "POST", "/networks/" + ids[0] + "/endpoints",
			`{"IpConfigurations":[{"IpAddress":"10.244.1.77"}],"Policies":[{"Type":"OutBoundNAT","Settings":[1]}]}`, 400, hnslb.CodeInvalidPolicy},
		{"endpoint address garbage", "POST", "/networks/" + ids[0] + "/endpoints", `{"IpConfigurations":[{"IpAddress":"10.244.1"}]}`, 400, hnslb.CodeInvalidIP},
		{"update with a broken document", "PUT", "/loadbalancers/" + lbID, `{"SourceVIP":`, 400, hnslb.CodeInvalidParameter},
		{"ID not a GUID", "GET", "/loadbalancers/..%2f..%2fetc", ``, 400, hnslb.CodeInvalidParameter},
		{"delete by a junk ID", "DELETE", "/endpoints/x'%3B--", ``, 400, hnslb.CodeInvalidParameter},
		{"unknown GUID", "DELETE", "/loadbalancers/00000000-0000-0000-0000-000000000000", ``, 404, hnslb.CodeNotFound},
		{"faults without a handler", "POST", "/faults", `{"errorRate":{"*":1}}`, 501, hnslb.CodeNotImplemented},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://hns"+c.path, strings.NewReader(c.body))
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			var we wireErr
			if err := json.Unmarshal(rec.Body.Bytes(), &we); err != nil || rec.Code != c.status || we.Code != c.code || we.Message == "" {
				t.Fatalf("status %d body %s; want %d with code %#x", rec.Code, rec.Body.String(), c.status, uint32(c.code))
			}
		})
	}
	after, err := json.Marshal(h.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("malformed requests changed the simulator:\nbefore %s\nafter  %s", before, after)
	}

	// Routes that do not exist are the mux's 404 and 405, not HNS errors.
	for path, status := range map[string]int{"/nope": http.StatusNotFound, "/version?x": http.StatusOK} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://hns"+path, nil))
		if rec.Code != status {
			t.Errorf("GET %s: %d, want %d", path, rec.Code, status)
		}
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("PATCH", "http://hns/loadbalancers/"+lbID, strings.NewReader("{}")))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PATCH: %d, want 405", rec.Code)
	}
}
