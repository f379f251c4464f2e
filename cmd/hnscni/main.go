// Command hnscni is the CNI plugin that wires pods into HNS networks; see
// docs/cni.md. All logic lives in package cni.
package main

import "github.com/hnsproxy/hnsproxy/cni"

func main() { cni.Main() }
