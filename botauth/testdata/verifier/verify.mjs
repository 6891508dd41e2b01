// Test harness for package botauth: Cloudflare's web-bot-auth verifier
// (the npm package, 0.1.3) checks requests that botauth signed.
//
// stdin: {"requests": [{"url", "method", "headers": {name: value}}]}
// stdout: {"directories": {url: {...}}, "results": [{"ok", "error", ...}]}
//
// For each request it reads Signature-Agent, fetches the key directory it
// names (status 200, no redirect, the draft's media type), checks the
// directory's own signatures (one per key, "@authority";req and
// "content-digest", tag "http-message-signatures-directory"), picks the
// key whose JWK thumbprint is the signature's keyid, and calls the
// package's verify with it. web-bot-auth 0.1.3 resolves a covered
// "signature-agent";key="x" over the whole field instead of the
// Dictionary member RFC 9421 section 2.1.2 names, so for the Dictionary
// form the request is handed to it with Signature-Agent narrowed to that
// member's value; the bare String form is handed over as sent.
import { createHash, webcrypto } from "node:crypto";

// Node.js 18 (Debian 12's) has WebCrypto but not yet as the global the
// package calls; later versions have it.
globalThis.crypto ??= webcrypto;
const { verify, jwkToKeyID, helpers } = await import("web-bot-auth");
const { verifierFromJWK } = await import("web-bot-auth/crypto");
const httpsig = await import("http-message-sig");
const { parseDictionary, parseItem, serializeItem } = await import("structured-headers");

const MEDIA_TYPE = "application/http-message-signatures-directory+json";
const DIRECTORY_TAG = "http-message-signatures-directory";

const thumbprint = (jwk) =>
  jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE);

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

// fetchDirectory fetches and checks one key directory.
async function fetchDirectory(url) {
  const res = await fetch(url, {
    redirect: "manual",
    headers: { accept: MEDIA_TYPE },
  });
  if (res.status !== 200) throw new Error(`directory: status ${res.status}`);
  const type = res.headers.get("content-type");
  if (type !== MEDIA_TYPE) throw new Error(`directory: content-type ${type}`);
  const body = new Uint8Array(await res.arrayBuffer());
  const { keys } = JSON.parse(new TextDecoder().decode(body));
  if (!Array.isArray(keys)) throw new Error("directory: no keys array");
  for (const k of keys) {
    if (k.kid !== undefined && k.kid !== (await thumbprint(k)))
      throw new Error(`directory: kid ${k.kid} is not the key's thumbprint`);
  }
  const digest = `sha-256=:${createHash("sha256").update(body).digest("base64")}:`;
  if (res.headers.get("content-digest") !== digest)
    throw new Error(`directory: content-digest ${res.headers.get("content-digest")}, body's is ${digest}`);
  // One signature per label; http-message-sig verifies one at a time.
  const inputs = parseDictionary(res.headers.get("signature-input") ?? "");
  const sigs = parseDictionary(res.headers.get("signature") ?? "");
  const signedBy = [];
  for (const [label, member] of inputs) {
    const sig = sigs.get(label);
    if (!sig) throw new Error(`directory: no Signature for label ${label}`);
    const input = `${label}=${serializeMember(member)}`;
    const message = {
      request: { method: "GET", url, headers: {} },
      response: {
        status: res.status,
        headers: {
          "signature-input": input,
          signature: `${label}=:${Buffer.from(sig[0]).toString("base64")}:`,
          "content-digest": digest,
        },
      },
    };
    const keyid = member[1].get("keyid");
    const jwk = [];
    for (const k of keys) if ((await thumbprint(k)) === keyid) jwk.push(k);
    if (jwk.length !== 1) throw new Error(`directory: signature ${label} by unknown key ${keyid}`);
    const v = await verifierFromJWK(jwk[0]);
    await httpsig.verify(message, async (data, signature, params) => {
      if (params.tag !== DIRECTORY_TAG) throw new Error(`directory: tag ${params.tag}`);
      if (params.created.getTime() > Date.now()) throw new Error("directory: created in the future");
      return v(data, signature, params);
    });
    signedBy.push(keyid);
  }
  return { keys, signedBy };
}

// serializeMember writes back an inner list with parameters as it was
// received, for http-message-sig to rebuild "@signature-params" from.
function serializeMember([items, params]) {
  const comps = items.map((i) => serializeItem(i)).join(" ");
  let p = "";
  for (const [k, v] of params) p += typeof v === "number" ? `;${k}=${v}` : `;${k}=${serializeItem([v, new Map()])}`;
  return `(${comps})${p}`;
}

const directories = new Map();
async function directory(url) {
  if (!directories.has(url)) {
    directories.set(url, await fetchDirectory(url).then(
      (d) => ({ ok: true, ...d }),
      (e) => ({ ok: false, error: String(e.message ?? e) }),
    ));
  }
  return directories.get(url);
}

async function check(r) {
  const headers = new Headers(r.headers);
  const input = parseDictionary(headers.get("signature-input") ?? "");
  if (input.size !== 1) throw new Error(`${input.size} signatures`);
  const [[label, [components, params]]] = input;
  const agentComponent = components.find(([name]) => name === "signature-agent");
  const field = headers.get("signature-agent");
  if (!field || !agentComponent) throw new Error("no covered Signature-Agent");
  let agent;
  let form;
  if (field.startsWith('"')) {
    form = "string";
    agent = parseItem(field)[0];
  } else {
    form = "dictionary";
    const member = agentComponent[1].get("key");
    if (member !== label) throw new Error(`Signature-Agent member ${member} is not the signature's label ${label}`);
    const dict = parseDictionary(field);
    if (!dict.has(member)) throw new Error(`Signature-Agent has no member ${member}`);
    agent = dict.get(member)[0];
    headers.set("signature-agent", serializeItem([agent, new Map()]));
  }
  const dir = await directory(agent);
  if (!dir.ok) throw new Error(dir.error);
  const keyid = params.get("keyid");
  let jwk;
  for (const k of dir.keys) if ((await thumbprint(k)) === keyid) jwk = k;
  if (!jwk) throw new Error(`unknown key ${keyid}`);
  await verify(new Request(r.url, { method: r.method, headers }), await verifierFromJWK(jwk));
  return { form, agent, keyid, nonce: params.get("nonce") };
}

const { requests } = await readStdin();
const results = [];
for (const r of requests) {
  try {
    results.push({ ok: true, ...(await check(r)) });
  } catch (e) {
    results.push({ ok: false, error: String(e.message ?? e) });
  }
}
process.stdout.write(JSON.stringify({ directories: Object.fromEntries(directories), results }));
