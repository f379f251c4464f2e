package hnslb

// IsGUID reports whether s is a GUID as HNS writes its objects' IDs and
// hcn parses them (go-winio's guid.FromString): 8-4-4-4-12 hex digits, either case, no
// braces. A regexp would be the bulk of a create's cost, hence the loop.
func IsGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
