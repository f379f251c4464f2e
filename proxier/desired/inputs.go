package desired

import (
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// InputsOf pairs each Service with its EndpointSlices (those whose
// kubernetes.io/service-name label names it in its namespace), for callers
// that list objects rather than watch them. Slices of no listed Service are
// left out.
func InputsOf(svcs []v1.Service, slices []discoveryv1.EndpointSlice) []ServiceInput {
	byService := map[string][]*EndpointSlice{}
	for i := range slices {
		name := slices[i].Labels[discoveryv1.LabelServiceName]
		if name == "" {
			continue
		}
		key := slices[i].Namespace + "/" + name
		s := SliceOf(&slices[i])
		byService[key] = append(byService[key], &s)
	}
	in := make([]ServiceInput, 0, len(svcs))
	for i := range svcs {
		s := &svcs[i]
		in = append(in, ServiceInput{Service: s, Slices: byService[s.Namespace+"/"+s.Name]})
	}
	return in
}
