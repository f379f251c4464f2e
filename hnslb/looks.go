package hnslb

// SilentLooks is how many looks in a row must leave out an object before
// it is taken for gone: listings, and gets, which hcn makes as listings
// filtered on the ID or the name (hcsshim hcn/hcn*.go; hcnclient readOne).
// A listing is an enumeration followed by a read of each object, and HNS
// is not transactional, so nothing rules out one leaving out an object HNS
// holds; taken at one look's word, such an object was forgotten, made
// again beside itself, or left in HNS for good, nobody's. Where a look
// misses an object by chance, three miss it with that chance cubed.
const SilentLooks = 3

// GetLooking asks get again while it answers "not found", SilentLooks
// times in all, and returns the last answer: an object really gone costs
// two more gets, each an enumeration that finds nothing.
func GetLooking[T any](get func() (T, error)) (T, error) {
	for look := 1; ; look++ {
		v, err := get()
		if look == SilentLooks || !IsNotFound(err) {
			return v, err
		}
	}
}
