// Package eip3009 is the one place the service reads and checks EIP-3009
// transfer authorizations (USDC's transferWithAuthorization), the signed
// payment both x402's exact scheme and MPP's evm charge carry: the EIP-712
// digest of a TransferWithAuthorization under a token's domain, signing it
// (for tests and tools) and recovering its signer, with go-ethereum's
// secp256k1 and Keccak-256.
package eip3009

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Domain is a token's EIP-712 domain: the name and version its contract
// hashes into every signature, the chain and the contract's address.
type Domain struct {
	// Name is the token's EIP-712 name, e.g. "USD Coin" for USDC on Base,
	// "USDC" on Base Sepolia.
	Name string
	// Version is the token's EIP-712 version, "2" for USDC.
	Version string
	// ChainID is the EVM chain id (8453 for Base, 84532 for Base Sepolia).
	ChainID int64
	// Contract is the token contract (the domain's verifyingContract).
	Contract common.Address
}

// Authorization is a TransferWithAuthorization message as the payment
// payloads carry it: addresses as hex, amounts and times as decimal strings,
// the nonce as 32 bytes of hex.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// Parsed is an Authorization with its fields checked and decoded.
type Parsed struct {
	From, To                common.Address
	Value                   *big.Int
	ValidAfter, ValidBefore *big.Int
	Nonce                   [32]byte
}

var (
	domainTypeHash = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	// TransferTypeHash is keccak256 of the TransferWithAuthorization type.
	TransferTypeHash = crypto.Keccak256Hash([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))

	maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
)

// ErrInvalid is returned for an authorization or signature that does not
// parse.
var ErrInvalid = errors.New("invalid authorization")

// Parse checks and decodes a.
func (a Authorization) Parse() (*Parsed, error) {
	var p Parsed
	var err error
	if p.From, err = ParseAddress(a.From); err != nil {
		return nil, fmt.Errorf("%w: from: %w", ErrInvalid, err)
	}
	if p.To, err = ParseAddress(a.To); err != nil {
		return nil, fmt.Errorf("%w: to: %w", ErrInvalid, err)
	}
	for _, f := range []struct {
		name string
		s    string
		dst  **big.Int
	}{{"value", a.Value, &p.Value}, {"validAfter", a.ValidAfter, &p.ValidAfter}, {"validBefore", a.ValidBefore, &p.ValidBefore}} {
		if *f.dst, err = ParseUint256(f.s); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, f.name, err)
		}
	}
	nonce, err := parseHex(a.Nonce)
	if err != nil || len(nonce) != 32 {
		return nil, fmt.Errorf("%w: nonce: not 32 bytes of hex", ErrInvalid)
	}
	copy(p.Nonce[:], nonce)
	return &p, nil
}

// ParseAddress reads a 0x-prefixed 20-byte hex address, in lower case or
// with a valid EIP-55 checksum.
func ParseAddress(s string) (common.Address, error) {
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") {
		return common.Address{}, errors.New("not a 0x-prefixed 20-byte hex address")
	}
	addr := common.HexToAddress(s)
	if s[2:] != strings.ToLower(s[2:]) && s[2:] != strings.ToUpper(s[2:]) && addr.Hex() != s {
		return common.Address{}, errors.New("bad EIP-55 checksum")
	}
	return addr, nil
}

// ParseUint256 reads a decimal uint256 without sign or leading zeros.
func ParseUint256(s string) (*big.Int, error) {
	if s == "" || len(s) > 78 || (len(s) > 1 && s[0] == '0') || strings.Trim(s, "0123456789") != "" {
		return nil, errors.New("not a decimal uint256")
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Cmp(maxUint256) > 0 {
		return nil, errors.New("not a decimal uint256")
	}
	return n, nil
}

func parseHex(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return nil, errors.New("missing 0x")
	}
	return common.ParseHexOrString(s)
}

// Separator is the domain's EIP-712 separator.
func (d Domain) Separator() common.Hash {
	return crypto.Keccak256Hash(
		domainTypeHash[:],
		crypto.Keccak256([]byte(d.Name)),
		crypto.Keccak256([]byte(d.Version)),
		word(big.NewInt(d.ChainID)),
		common.LeftPadBytes(d.Contract[:], 32),
	)
}

// Digest is the EIP-712 digest a TransferWithAuthorization signature signs:
// keccak256(0x1901 ‖ domain separator ‖ struct hash).
func (p *Parsed) Digest(d Domain) common.Hash {
	structHash := crypto.Keccak256(
		TransferTypeHash[:],
		common.LeftPadBytes(p.From[:], 32),
		common.LeftPadBytes(p.To[:], 32),
		word(p.Value),
		word(p.ValidAfter),
		word(p.ValidBefore),
		p.Nonce[:],
	)
	sep := d.Separator()
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], structHash)
}

func word(n *big.Int) []byte { return common.LeftPadBytes(n.Bytes(), 32) }

// Recover returns the address whose key made sig (65 bytes r ‖ s ‖ v, v
// 27/28 or 0/1, as hex) over p under d. Signatures with a high s are
// refused, as USDC's contract refuses them.
func (p *Parsed) Recover(d Domain, sig string) (common.Address, error) {
	b, err := parseHex(sig)
	if err != nil || len(b) != 65 {
		return common.Address{}, fmt.Errorf("%w: signature is not 65 bytes of hex", ErrInvalid)
	}
	b = append([]byte(nil), b...)
	if b[64] >= 27 {
		b[64] -= 27
	}
	r, s := new(big.Int).SetBytes(b[:32]), new(big.Int).SetBytes(b[32:64])
	if !crypto.ValidateSignatureValues(b[64], r, s, true) {
		return common.Address{}, fmt.Errorf("%w: signature values out of range", ErrInvalid)
	}
	digest := p.Digest(d)
	pub, err := crypto.SigToPub(digest[:], b)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// Sign signs p under d with key and returns the 65-byte signature as hex
// with v 27/28, as wallets produce it.
func (p *Parsed) Sign(d Domain, key *ecdsa.PrivateKey) (string, error) {
	digest := p.Digest(d)
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return "", fmt.Errorf("error signing authorization: %w", err)
	}
	sig[64] += 27
	return "0x" + common.Bytes2Hex(sig), nil
}

// Key parses a hex private key (with or without 0x).
func Key(hexKey string) (*ecdsa.PrivateKey, error) {
	return crypto.HexToECDSA(strings.TrimPrefix(hexKey, "0x"))
}

// Address is the address of key.
func Address(key *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(key.PublicKey) }

// Keccak256 is Keccak-256 of the concatenated inputs.
func Keccak256(data ...[]byte) common.Hash { return crypto.Keccak256Hash(data...) }
