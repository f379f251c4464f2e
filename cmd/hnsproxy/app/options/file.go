package options

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/kube-proxy/config/v1alpha1"
)

// codecs decode KubeProxyConfiguration v1alpha1, strictly and leniently.
var (
	configScheme   = newConfigScheme()
	strictCodecs   = serializer.NewCodecFactory(configScheme, serializer.EnableStrict)
	lenientCodecs  = serializer.NewCodecFactory(configScheme, serializer.DisableStrict)
	configGVK      = v1alpha1.SchemeGroupVersion.WithKind("KubeProxyConfiguration")
	configGVKHuman = configGVK.String()
)

func newConfigScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err) // programming error
	}
	return s
}

// LoadConfigFile reads and decodes a KubeProxyConfiguration file, applying
// kube-proxy's v1alpha1 defaults, and returns the bytes it decoded too.
// Warnings report fields kube-proxy would also only warn about (unknown or
// duplicate fields).
func LoadConfigFile(path string) (*v1alpha1.KubeProxyConfiguration, []byte, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading config file: %w", err)
	}
	cfg, warnings, err := DecodeConfig(data)
	if err != nil {
		return nil, nil, warnings, fmt.Errorf("config file %s: %w", path, err)
	}
	return cfg, data, warnings, nil
}

// DecodeConfig decodes a serialized KubeProxyConfiguration (YAML or JSON).
// Like kube-proxy, it decodes strictly first; if that fails only because of
// unknown or duplicate fields, it decodes leniently and returns a warning.
func DecodeConfig(data []byte) (*v1alpha1.KubeProxyConfiguration, []string, error) {
	var warnings []string
	obj, gvk, err := strictCodecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		if !runtime.IsStrictDecodingError(err) {
			return nil, nil, WithDecodeHint(fmt.Errorf("decoding %s: %w", configGVKHuman, err))
		}
		var lenientErr error
		obj, gvk, lenientErr = lenientCodecs.UniversalDeserializer().Decode(data, nil, nil)
		if lenientErr != nil {
			return nil, nil, fmt.Errorf("decoding %s: %w", configGVKHuman, err)
		}
		warnings = append(warnings, fmt.Sprintf("using lenient decoding as strict decoding failed: %v", err))
	}
	cfg, ok := obj.(*v1alpha1.KubeProxyConfiguration)
	if !ok {
		return nil, warnings, fmt.Errorf("got %v, want %s", gvk, configGVKHuman)
	}
	if err := checkPrintable(cfg); err != nil {
		return nil, warnings, fmt.Errorf("%s: %w", configGVKHuman, err)
	}
	SetDefaults(cfg)
	return cfg, warnings, nil
}

// EncodeConfig serializes a KubeProxyConfiguration as v1alpha1 YAML.
func EncodeConfig(c *v1alpha1.KubeProxyConfiguration) ([]byte, error) {
	info, ok := runtime.SerializerInfoForMediaType(strictCodecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		return nil, fmt.Errorf("no YAML serializer")
	}
	c = c.DeepCopy()
	c.SetGroupVersionKind(configGVK)
	return runtime.Encode(strictCodecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion), c)
}
