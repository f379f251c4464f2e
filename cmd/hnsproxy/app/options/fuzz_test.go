package options

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeConfig: any bytes either fail to decode with an error or decode
// to a configuration that survives an encode/decode round trip; never a panic.
func FuzzDecodeConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := DecodeConfig(data)
		if err != nil {
			return
		}
		out, err := EncodeConfig(cfg)
		if err != nil {
			t.Fatalf("encoding a decoded configuration: %v", err)
		}
		if _, _, err := DecodeConfig(out); err != nil {
			t.Fatalf("decoding our own encoding: %v\n%s", err, out)
		}
	})
}
