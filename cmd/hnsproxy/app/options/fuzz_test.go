package options

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzConfigFile feeds arbitrary bytes as the --config file through the
// daemon's whole path (flags parsed, file decoded strictly then leniently,
// merged, defaulted, validated). It must never panic; it either fails
// with an error or yields a Config that passes validation. Whatever
// DecodeConfig accepts must also survive EncodeConfig and decode to the
// same configuration (defaulting is idempotent; TypeMeta aside).
func FuzzConfigFile(f *testing.F) {
	for _, name := range []string{"kubeadm-windows-overlay.yaml", "l2bridge-tuned.json", "unknown-field.yaml", "wrong-kind.yaml", "iptables-mode.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"", "{}", "null", "[]", "---\n---\n", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n",
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: x}\nwinkernel: {networkName: y}\n",
		`{"apiVersion":"kubeproxy.config.k8s.io/v1alpha1","kind":"KubeProxyConfiguration","winkernel":{"networkName":"x"},"iptables":{"syncPeriod":"-1s"},"featureGates":{"WinDSR":true,"X":false}}`,
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nhealthzBindAddress: '[::1]:99999'\nmetricsBindAddress: 'x'\nclusterCIDR: 10.0.0.0/33,fd00::/129\n",
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\na: &a [*a, *a, *a]\n",
		"apiVersion: v1\nkind: ConfigMap\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, cfg, _, err := parse(t, map[string]string{"KUBE_NETWORK": "l2bridge"}, "--config="+path)
		if err == nil {
			if cfg == nil {
				t.Fatal("no error and no Config")
			}
			if verr := Validate(cfg); verr != nil {
				t.Fatalf("Complete accepted a Config that does not validate: %v", verr)
			}
		}

		kp, _, err := DecodeConfig(data)
		if err != nil {
			return
		}
		enc, err := EncodeConfig(kp)
		if err != nil {
			t.Fatalf("EncodeConfig of a decoded configuration: %v", err)
		}
		again, _, err := DecodeConfig(enc)
		if err != nil {
			t.Fatalf("decoding the encoded configuration: %v\n%s", err, enc)
		}
		// TypeMeta is the decoder's business, not configuration: a file that
		// spells the key "ApiVersion" decodes leniently with an empty
		// TypeMeta.APIVersion, and the encoder writes it back.
		kp.TypeMeta, again.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
		if !equality.Semantic.DeepEqual(kp, again) {
			t.Fatalf("configuration changed across encode and decode:\n%s", enc)
		}
	})
}
