package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// variantFlags choose the codes where real HNS is not known (sim.ErrorVariants).
type variantFlags struct {
	missingBackend string
	missingLB      string
	addressTaken   string
	missingNetwork string
	missingListing string
}

func (f *variantFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.missingBackend, "missing-backend-code", "0x803b0002",
		"code a load balancer create or modify returns for a backend endpoint that does not exist: 0x803b0002, 0x490, 0x803b0007 or 0x803b001c (unknown on real HNS)")
	fs.StringVar(&f.missingLB, "missing-lb-code", "0x490",
		"code a load balancer modify, get or delete returns for an ID that does not exist: 0x490 or 0x803b0002 (unknown on real HNS)")
	fs.StringVar(&f.addressTaken, "address-taken-code", "0xb7",
		"code an endpoint create returns for an address another endpoint holds: 0xb7, 0x1392 or 0x803b002f (unknown on real HNS)")
	fs.StringVar(&f.missingNetwork, "missing-network-code", "0x803b0001",
		"code an endpoint create returns for a network that does not exist: 0x803b0001 or 0x490 (unknown on real HNS)")
	fs.StringVar(&f.missingListing, "missing-network-listing-code", "0",
		"what a listing of a network's endpoints answers for a network that does not exist: 0 (an empty list), or the error 0x803b0001 or 0x490 (unknown on real HNS)")
}

func (f *variantFlags) variants() (sim.ErrorVariants, error) {
	var v sim.ErrorVariants
	for _, c := range []struct {
		flag, value string
		code        *hnslb.ErrorCode
	}{
		{"--missing-backend-code", f.missingBackend, &v.MissingBackend},
		{"--missing-lb-code", f.missingLB, &v.MissingLoadBalancer},
		{"--address-taken-code", f.addressTaken, &v.AddressTaken},
		{"--missing-network-code", f.missingNetwork, &v.MissingNetwork},
		{"--missing-network-listing-code", f.missingListing, &v.MissingNetworkListing},
	} {
		n, err := strconv.ParseUint(c.value, 0, 32)
		if err != nil {
			return v, fmt.Errorf("%s %q: %v", c.flag, c.value, err)
		}
		*c.code = hnslb.ErrorCode(n)
	}
	if err := v.Check(); err != nil {
		return v, fmt.Errorf("--missing-backend-code / --missing-lb-code / --address-taken-code / --missing-network-code / --missing-network-listing-code: %w", err)
	}
	return v, nil
}
