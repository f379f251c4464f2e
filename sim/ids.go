package sim

import "fmt"

// idSource generates HNS-style identifiers from a seed and a counter, so the
// sequence is reproducible and its whole state (two numbers) can be saved.
type idSource struct {
	Seed uint64 `json:"seed"`
	Next uint64 `json:"next"`
}

// splitmix64 is a well-mixed 64-bit hash of x.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (s *idSource) draw() (uint64, uint64) {
	s.Next++
	a := splitmix64(s.Seed ^ splitmix64(s.Next))
	return a, splitmix64(a ^ s.Next)
}

// guid returns a random (version 4) GUID in the lowercase form HNS uses.
func (s *idSource) guid() string {
	a, b := s.draw()
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x",
		uint32(a>>32), uint16(a>>16), uint16(a)&0x0fff|0x4000,
		uint16(b>>48)&0x3fff|0x8000, b&0xffffffffffff)
}

// mac returns a MAC in Hyper-V's range (OUI 00-15-5D), written as HNS writes it.
func (s *idSource) mac() string {
	a, _ := s.draw()
	return fmt.Sprintf("00-15-5D-%02X-%02X-%02X", byte(a>>16), byte(a>>8), byte(a))
}
