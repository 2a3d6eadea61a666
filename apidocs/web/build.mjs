// Copies the page (index.html, reference.js) and Scalar's standalone bundle
// (MIT licensed) into ../dist, which is committed and embedded in the
// binary. Run by `make apidocs` after `npm ci`.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";

const pkg = "node_modules/@scalar/api-reference";
const version = JSON.parse(readFileSync(`${pkg}/package.json`, "utf8")).version;
rmSync("../dist", { recursive: true, force: true });
mkdirSync("../dist");
copyFileSync("index.html", "../dist/index.html");
copyFileSync("reference.js", "../dist/reference.js");
copyFileSync(`${pkg}/dist/browser/standalone.js`, "../dist/scalar-api-reference.js");
console.log(`apidocs: @scalar/api-reference ${version} and the page copied into ../dist`);
