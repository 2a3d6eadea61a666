// A local EVM chain for the payment tests: ganache (chain id 84532, the
// id of Base Sepolia, hardfork shanghai) in this process, with the test
// token (contracts/PaymentToken.sol, EIP-3009 like USDC) deployed and the
// payer funded, and Multicall3's code at its canonical address.
//
// The contracts are compiled by solc from npm (evmVersion shanghai) against
// @openzeppelin/contracts from package-lock.json; the output is cached in
// .cache/ under the hash of the sources and the compiler version, so a run
// compiles only when a source changed.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import ganache from "ganache";
import { createPublicClient, createWalletClient, custom, defineChain, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

// The well-known development keys (hardhat/anvil accounts 0–3). Never funded
// anywhere that matters.
export const keys = {
  payer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  facilitator: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  owner: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  payTo: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
};

export const chainId = 84532;
export const tokenName = "USDC";
export const tokenVersion = "2";
export const multicall3Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

// compile returns {PaymentToken, Multicall3}, each {abi, bytecode, deployedBytecode}.
export function compile() {
  const files = ["PaymentToken.sol", "Multicall3.sol"];
  const sources = Object.fromEntries(
    files.map((f) => [f, { content: readFileSync(join(here, "contracts", f), "utf8") }]),
  );
  const solcVersion = JSON.parse(readFileSync(require.resolve("solc/package.json"), "utf8")).version;
  const hash = createHash("sha256")
    .update(solcVersion)
    .update(JSON.stringify(sources))
    .update(readFileSync(join(here, "package-lock.json")))
    .digest("hex")
    .slice(0, 16);
  const cacheDir = join(here, ".cache");
  const cached = join(cacheDir, `contracts-${hash}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8"));
  const solc = require("solc");
  const input = {
    language: "Solidity",
    sources,
    settings: {
      evmVersion: "shanghai",
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const findImports = (path) => {
    try {
      return { contents: readFileSync(require.resolve(path), "utf8") };
    } catch (e) {
      return { error: `${path}: ${e.message}` };
    }
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (out.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  const pick = (file, name) => {
    const c = out.contracts[file][name];
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, deployedBytecode: `0x${c.evm.deployedBytecode.object}` };
  };
  const result = { PaymentToken: pick("PaymentToken.sol", "PaymentToken"), Multicall3: pick("Multicall3.sol", "Multicall3") };
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cached, JSON.stringify(result));
  return result;
}

export const chain = defineChain({
  id: chainId,
  name: "local base-sepolia",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: ["http://127.0.0.1:0"] } },
});

// start runs the chain and returns the provider, clients and the token.
export async function start({ payerBalance = 1_000_000_000n } = {}) {
  const contracts = compile();
  const provider = ganache.provider({
    chain: { chainId, hardfork: "shanghai" },
    wallet: {
      accounts: Object.values(keys).map((secretKey) => ({ secretKey, balance: "0x56BC75E2D63100000" })), // 100 ETH
    },
    logging: { quiet: true },
    miner: { instamine: "eager" },
  });
  const transport = custom(provider);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const wallet = (key) => createWalletClient({ account: privateKeyToAccount(key), chain, transport, pollingInterval: 20 }).extend(publicActions);
  const owner = wallet(keys.owner);

  const deployHash = await owner.deployContract({
    abi: contracts.PaymentToken.abi,
    bytecode: contracts.PaymentToken.bytecode,
    args: [tokenName, "USDC", tokenVersion],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  const token = receipt.contractAddress;
  await provider.request({
    method: "evm_setAccountCode",
    params: [multicall3Address, contracts.Multicall3.deployedBytecode],
  });
  const payer = privateKeyToAccount(keys.payer).address;
  const mint = await owner.writeContract({
    address: token,
    abi: contracts.PaymentToken.abi,
    functionName: "mint",
    args: [payer, payerBalance],
  });
  await publicClient.waitForTransactionReceipt({ hash: mint });

  const tokenCall = (client, functionName, args = []) =>
    client.writeContract({ address: token, abi: contracts.PaymentToken.abi, functionName, args });
  return {
    provider,
    publicClient,
    wallet,
    token,
    abi: contracts.PaymentToken.abi,
    payer,
    payTo: privateKeyToAccount(keys.payTo).address,
    balanceOf: (address) =>
      publicClient.readContract({ address: token, abi: contracts.PaymentToken.abi, functionName: "balanceOf", args: [address] }),
    pause: async (on) => {
      const hash = await tokenCall(owner, on ? "pause" : "unpause");
      await publicClient.waitForTransactionReceipt({ hash });
    },
  };
}
