// Writes access/testdata/mpp_vectors.json: MPP (Payment HTTP authentication,
// method "evm", intent "charge") challenges issued with mppx's own
// Challenge.from (HMAC-bound ids) and the credentials mppx's own EVM client
// signs for them, with the values a verifier derives (the EIP-3009 nonce
// keccak256(id ‖ realm), the EIP-712 digest, the payer). The Go unit tests
// (access/mpp_test.go) verify these credentials with the service's own code.
//
// Regenerate (from a checkout where make test has installed node_modules):
//   cd tests/interop/payments && node mpp-vectors.mjs
// The payer is the well-known development key (hardhat account 0), the
// validity windows are fixed in 2026, so the output is deterministic apart
// from nothing: EIP-712 signatures with RFC 6979 nonces are deterministic.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { Challenge } from "mppx";
import { evm } from "mppx/client";
import { hashTypedData } from "viem";
import { privateKeyToAccount } from "viem/accounts";

import { keys } from "./chain.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const secret = "mpp-vector-secret";
const account = privateKeyToAccount(keys.payer);

const cases = [
  {
    name: "base-sepolia USDC",
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    tokenName: "USDC",
    tokenVersion: "2",
    payTo: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    amount: "63776",
    description: "cryptointel signal_latest (one request)",
    realm: "api.cryptointel.test",
    expires: "2026-03-04T10:05:00Z",
    now: "2026-03-04T10:01:00Z",
  },
  {
    name: "base USDC",
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    tokenName: "USD Coin",
    tokenVersion: "2",
    payTo: "0x3333333333333333333333333333333333333333",
    amount: "50000",
    description: "cryptointel search (one request)",
    realm: "localhost",
    expires: "2026-03-04T10:05:00Z",
    now: "2026-03-04T10:04:59Z",
  },
];

const out = [];
for (const c of cases) {
  const challenge = Challenge.from({
    realm: c.realm,
    method: "evm",
    intent: "charge",
    request: {
      amount: c.amount,
      currency: c.asset,
      description: c.description,
      methodDetails: { chainId: c.chainId, credentialTypes: ["authorization"], decimals: 6 },
      recipient: c.payTo,
    },
    description: c.description,
    expires: c.expires,
    secretKey: secret,
  });
  const wwwAuthenticate = Challenge.serialize(challenge);
  // The client's own path: parse the header as it arrives, then sign.
  const parsed = Challenge.deserialize(wwwAuthenticate);
  const method = evm.charge({ account, authorization: { name: c.tokenName, version: c.tokenVersion } });
  const authorization = await method.createCredential({ challenge: parsed, context: {} });
  const payload = JSON.parse(Buffer.from(authorization.slice("Payment ".length), "base64url").toString("utf8")).payload;
  const digest = hashTypedData({
    domain: { name: c.tokenName, version: c.tokenVersion, chainId: c.chainId, verifyingContract: c.asset },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "TransferWithAuthorization",
    message: {
      from: payload.from,
      to: payload.to,
      value: BigInt(payload.value),
      validAfter: BigInt(payload.validAfter),
      validBefore: BigInt(payload.validBefore),
      nonce: payload.nonce,
    },
  });
  out.push({ ...c, wwwAuthenticate, authorization, payer: account.address, nonce: payload.nonce, digest });
}

const file = join(here, "../../../access/testdata/mpp_vectors.json");
writeFileSync(
  file,
  `${JSON.stringify({ generator: "tests/interop/payments/mpp-vectors.mjs (mppx 0.11.0, viem 2.57.13)", secret, cases: out }, null, 2)}\n`,
);
console.log(`wrote ${out.length} vectors to ${file}`);
