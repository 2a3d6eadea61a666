package eip3009_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/eip3009"
)

func TestParseRefusesWhatTheTokenWouldNot(t *testing.T) {
	t.Parallel()
	good := eip3009.Authorization{
		From: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", To: "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
		Value: "1000", ValidAfter: "0", ValidBefore: "1772618700",
		Nonce: "0x" + "ab" + "00000000000000000000000000000000000000000000000000000000000000",
	}
	_, err := good.Parse()
	require.NoError(t, err)
	for name, alter := range map[string]func(a *eip3009.Authorization){
		"bad checksum":   func(a *eip3009.Authorization) { a.From = "0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266" },
		"short address":  func(a *eip3009.Authorization) { a.To = "0x90f79bf6" },
		"no 0x":          func(a *eip3009.Authorization) { a.To = "90f79bf6eb2c4f870365e785982e1f101e93b906" },
		"negative value": func(a *eip3009.Authorization) { a.Value = "-1" },
		"hex value":      func(a *eip3009.Authorization) { a.Value = "0x10" },
		"leading zero":   func(a *eip3009.Authorization) { a.Value = "01" },
		"over uint256": func(a *eip3009.Authorization) {
			a.ValidBefore = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
		},
		"empty":            func(a *eip3009.Authorization) { a.ValidAfter = "" },
		"short nonce":      func(a *eip3009.Authorization) { a.Nonce = "0xabcd" },
		"nonce not hex":    func(a *eip3009.Authorization) { a.Nonce = "0x" + "zz" + good.Nonce[4:] },
		"nonce without 0x": func(a *eip3009.Authorization) { a.Nonce = good.Nonce[2:] },
	} {
		a := good
		alter(&a)
		_, err := a.Parse()
		require.ErrorIs(t, err, eip3009.ErrInvalid, name)
	}
}

func TestSignRecoverRoundTrip(t *testing.T) {
	t.Parallel()
	key, err := eip3009.Key("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	require.NoError(t, err)
	a := eip3009.Authorization{
		From: eip3009.Address(key).Hex(), To: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
		Value: "63776", ValidAfter: "0", ValidBefore: "1772618700", Nonce: eip3009.Keccak256([]byte("n")).Hex(),
	}
	p, err := a.Parse()
	require.NoError(t, err)
	d := eip3009.Domain{Name: "USDC", Version: "2", ChainID: 84532, Contract: p.To}
	sig, err := p.Sign(d, key)
	require.NoError(t, err)
	got, err := p.Recover(d, sig)
	require.NoError(t, err)
	require.Equal(t, p.From, got)

	other := d
	other.ChainID = 8453
	got, err = p.Recover(other, sig)
	require.NoError(t, err)
	require.NotEqual(t, p.From, got, "a signature is bound to its chain")

	for _, bad := range []string{"", "0x", sig[:len(sig)-2], sig + "00", "0x" + string(make([]byte, 130))} {
		_, err := p.Recover(d, bad)
		require.ErrorIs(t, err, eip3009.ErrInvalid, bad)
	}
}
