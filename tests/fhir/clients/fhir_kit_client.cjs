// fhir-kit-client (npm, as its README uses it) against the served app: node fhir_kit_client.cjs BASE
// Prints one JSON object: each call's answer (or its error status), for tests/fhir/test_fhir_kit_client.py.
const Client = require("fhir-kit-client");

const TOY = "http://example.org/toy";

async function main(baseUrl) {
  const client = new Client({ baseUrl });
  const out = {};
  const compose = { include: [{ system: TOY, concept: [{ code: "T:2" }, { code: "T:3" }] }] };
  out.update = await client.update({
    resourceType: "ValueSet", id: "heart",
    body: { resourceType: "ValueSet", id: "heart", url: "http://example.org/vs/heart", status: "active", compose },
  });
  out.expand = await client.operation({ resourceType: "ValueSet", id: "heart", name: "$expand", method: "GET", input: { filter: "slow heart" } });
  out.validate = await client.operation({
    resourceType: "ValueSet", id: "heart", name: "validate-code",
    input: { resourceType: "Parameters", parameter: [{ name: "coding", valueCoding: { system: TOY, code: "T:4" } }] },
  });
  out.lookup = await client.operation({ resourceType: "CodeSystem", id: "toy", name: "lookup", method: "GET", input: { code: "T:2" } });
  out.subsumes = await client.operation({ resourceType: "CodeSystem", name: "subsumes", method: "GET", input: { system: TOY, codeA: "T:1", codeB: "T:2" } });
  out.translate = await client.operation({ resourceType: "ConceptMap", name: "translate", method: "GET", input: { sourceSystem: TOY, sourceCode: "T:2" } });
  try {
    await client.operation({ resourceType: "CodeSystem", id: "nope", name: "lookup", method: "GET", input: { code: "T:2" } });
  } catch (error) {
    out.unknown = { status: error.response?.status, outcome: error.response?.data };
  }
  process.stdout.write(JSON.stringify(out));
}

main(process.argv[2]).catch((error) => {
  process.stderr.write(`${error.stack || error}\n${JSON.stringify(error.response?.data ?? null)}\n`);
  process.exit(1);
});
