package access

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cryptointel/cryptointel/access/eip3009"
)

// v1Networks are x402 v1's EVM network names and their chain ids (x402's
// own table, @x402/evm EVM_NETWORK_CHAIN_ID_MAP). x402 v2 and MPP name a
// network by its CAIP-2 id, eip155:<chain id>.
var v1Networks = map[string]int64{
	"ethereum": 1, "sepolia": 11155111, "abstract": 2741, "abstract-testnet": 11124,
	"base-sepolia": 84532, "base": 8453, "avalanche-fuji": 43113, "avalanche": 43114,
	"iotex": 4689, "sei": 1329, "sei-testnet": 1328, "polygon": 137, "polygon-amoy": 80002,
	"peaq": 3338, "story": 1514, "educhain": 41923, "skale-base-sepolia": 324705682,
	"megaeth": 4326, "monad": 143, "stable": 988, "stable-testnet": 2201, "celo": 42220, "flare": 14,
}

// knownAsset is a 6-decimal token with EIP-3009 whose EIP-712 domain is
// known, so PAYMENT_ASSET_NAME and PAYMENT_ASSET_VERSION may be left unset.
type knownAsset struct {
	address       string
	name, version string
}

// knownAssets are USDC's deployments by chain id (the first is the default
// asset of its network), with the EIP-712 domain each contract hashes into
// signatures: on Base it is "USD Coin", on Base Sepolia "USDC". A
// signature made under another name is valid nowhere on chain.
var knownAssets = map[int64][]knownAsset{
	8453:   {{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin", "2"}},
	84532:  {{"0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", "2"}},
	1:      {{"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USD Coin", "2"}},
	43114:  {{"0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "USD Coin", "2"}},
	137:    {{"0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "USD Coin", "2"}},
	42161:  {{"0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "USD Coin", "2"}},
	421614: {{"0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d", "USD Coin", "2"}},
}

// KnownAssetDomain returns the EIP-712 name and version of a known token
// (USDC) on chainID, or ok false.
func KnownAssetDomain(chainID int64, asset string) (name, version string, ok bool) {
	for _, a := range knownAssets[chainID] {
		if strings.EqualFold(a.address, asset) {
			return a.name, a.version, true
		}
	}
	return "", "", false
}

// paymentNetwork is the network payments are taken on.
type paymentNetwork struct {
	chainID int64
	// v1 is the x402 v1 name ("base-sepolia"), or the CAIP-2 id when x402
	// v1 has no name for the chain.
	v1 string
}

// caip2 is the CAIP-2 id, e.g. "eip155:84532".
func (n paymentNetwork) caip2() string { return "eip155:" + strconv.FormatInt(n.chainID, 10) }

// parseNetwork reads PAYMENT_NETWORK: an x402 v1 name ("base",
// "base-sepolia") or a CAIP-2 id ("eip155:8453").
func parseNetwork(s string) (paymentNetwork, error) {
	if id, ok := v1Networks[s]; ok {
		return paymentNetwork{chainID: id, v1: s}, nil
	}
	rest, ok := strings.CutPrefix(s, "eip155:")
	id, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || id <= 0 || strconv.FormatInt(id, 10) != rest {
		return paymentNetwork{}, fmt.Errorf("unknown payment network %q: want an x402 network name such as base or base-sepolia, or a CAIP-2 id such as eip155:8453", s)
	}
	n := paymentNetwork{chainID: id, v1: s}
	for name, cid := range v1Networks {
		if cid == id {
			n.v1 = name
		}
	}
	return n, nil
}

// checkAddress validates an address setting.
func checkAddress(setting, s string) error {
	if _, err := eip3009.ParseAddress(s); err != nil {
		return fmt.Errorf("invalid %s %q: %w", setting, s, err)
	}
	return nil
}

// NetworkChainID returns the chain id of an x402 network name ("base") or
// CAIP-2 id ("eip155:8453").
func NetworkChainID(network string) (int64, bool) {
	n, err := parseNetwork(network)
	return n.chainID, err == nil
}
