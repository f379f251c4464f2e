// Package intent is the vocabulary shared by the pure desired-state function
// (package proxier/desired), which produces it, and the reconciler, which
// converges HNS towards it: load-balancer keys, desired load balancers and
// their backends, remote endpoints, IP families, and the one definition of
// each helper both sides need (key and IP order, load-balancer equality, an
// address's family, a remote backend's endpoint). It is a leaf: it imports
// only the HNS model (package hnslb) and the standard library, so neither
// side drags the other in.
package intent
