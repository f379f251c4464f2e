package options

import (
	"fmt"

	clientfeatures "k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
)

// client-go has gates of its own (WatchListClient, InformerResourceVersion,
// the CBOR ones...). kube-proxy registers them in its --feature-gates and
// makes client-go read them from there (k8s.io/kubernetes pkg/features),
// so an operator turns streamed lists off with
// --feature-gates=WatchListClient=false rather than KUBE_FEATURE_*
// variables. clientGates does the same for hnsproxy: it carries client-go's
// specs into the gate and answers client-go's questions from it.

// clientGates adapts a component-base gate to client-go's interfaces.
type clientGates struct {
	fg featuregate.FeatureGate
}

// ClientGates answers client-go's gate questions from fg; the app installs
// it with clientfeatures.ReplaceFeatureGates before making a client.
func ClientGates(fg featuregate.FeatureGate) clientfeatures.Gates { return clientGates{fg: fg} }

func (c clientGates) Enabled(name clientfeatures.Feature) bool {
	return c.fg.Enabled(featuregate.Feature(name))
}

// addClientGoGates registers client-go's gates, with their history, in g.
func addClientGoGates(g featuregate.MutableVersionedFeatureGate) error {
	return clientfeatures.AddVersionedFeaturesToExistingFeatureGates(clientRegistry{g})
}

// clientRegistry lets client-go add its gates to a component-base gate.
type clientRegistry struct {
	g featuregate.MutableVersionedFeatureGate
}

func (r clientRegistry) AddVersioned(in map[clientfeatures.Feature]clientfeatures.VersionedSpecs) error {
	out := make(map[featuregate.Feature]featuregate.VersionedSpecs, len(in))
	for name, specs := range in {
		converted := make(featuregate.VersionedSpecs, 0, len(specs))
		for _, s := range specs {
			spec := featuregate.FeatureSpec{Default: s.Default, LockToDefault: s.LockToDefault, Version: s.Version}
			switch s.PreRelease {
			case clientfeatures.Alpha:
				spec.PreRelease = featuregate.Alpha
			case clientfeatures.Beta:
				spec.PreRelease = featuregate.Beta
			case clientfeatures.GA:
				spec.PreRelease = featuregate.GA
			case clientfeatures.Deprecated:
				spec.PreRelease = featuregate.Deprecated
			default:
				return fmt.Errorf("client-go feature %s: unknown stage %q", name, s.PreRelease)
			}
			converted = append(converted, spec)
		}
		out[featuregate.Feature(name)] = converted
	}
	return r.g.AddVersioned(out)
}
