/**
 * <termsearch-autocomplete>: a dependency-free autocomplete over FHIR ValueSet/$expand.
 *
 *   <script type="module" src="/web/termsearch-autocomplete.js"></script>
 *   <termsearch-autocomplete system="http://hl7.org/fhir/sid/icd-10-cm" label="Diagnosis">
 *   </termsearch-autocomplete>
 *
 * Attributes: system (code system URI: the value set is `${system}?fhir_vs`), valueset (another
 * value set URL, e.g. `${system}?fhir_vs=isa/CODE`), endpoint (FHIR base, default "/fhir"),
 * count (suggestions, 10), debounce (ms, 150), min-chars (2), label, placeholder, api-key (sent
 * as X-API-Key), feedback (where to report which suggestion was chosen, or that none was: default
 * `/feedback` on the endpoint's server; "off" reports nothing). Property `value`: the selected
 * FHIR Coding or null. Event `change` (bubbles, composed): `detail` is the selected Coding
 * {system, version, code, display}.
 *
 * Keyboard: ArrowDown/ArrowUp move through the suggestions, Enter selects, Escape closes the
 * list (a second Escape clears the text). ARIA 1.2 combobox with a listbox popup.
 */

const MATCHED_TERM = "urn:termsearch:fhir:matched-term";
const SYSTEM_NAMES = {
  "http://human-phenotype-ontology.org": "HPO",
  "http://hl7.org/fhir/sid/icd-10-cm": "ICD-10-CM",
  "http://snomed.info/sct": "SNOMED CT",
  "http://www.nlm.nih.gov/research/umls": "UMLS",
};

export function systemName(uri) {
  return SYSTEM_NAMES[uri] || uri;
}

const TEMPLATE = `
<style>
  :host { display: block; font: inherit; color: inherit; max-width: 40rem; }
  label { display: block; font-weight: 600; margin-bottom: .25rem; }
  .box { position: relative; }
  input { box-sizing: border-box; width: 100%; font: inherit; padding: .5rem .65rem;
          border: 1px solid #8a8f98; border-radius: .375rem; }
  input:focus { outline: 2px solid #2f6feb; outline-offset: 1px; }
  ul { position: absolute; z-index: 10; left: 0; right: 0; margin: .25rem 0 0; padding: .25rem 0;
       list-style: none; background: #fff; border: 1px solid #c4c8cf; border-radius: .375rem;
       box-shadow: 0 6px 18px rgba(0, 0, 0, .12); max-height: 22rem; overflow-y: auto; }
  li { padding: .4rem .65rem; cursor: pointer; display: grid; grid-template-columns: 1fr auto; gap: 0 .75rem; }
  li[aria-selected="true"] { background: #e7efff; }
  .display { color: #111; }
  .meta { color: #555; font-size: .85em; white-space: nowrap; }
  .code { font-family: ui-monospace, monospace; }
  .matched { grid-column: 1 / -1; color: #555; font-size: .85em; }
  mark { background: #ffe58a; color: inherit; padding: 0; }
  .status { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
</style>
<label part="label" for="input"></label>
<div class="box">
  <input id="input" part="input" type="text" role="combobox" aria-autocomplete="list"
         aria-expanded="false" aria-controls="listbox" autocomplete="off" spellcheck="false">
  <ul id="listbox" part="listbox" role="listbox" hidden></ul>
</div>
<div id="status" class="status" role="status" aria-live="polite"></div>`;

function fold(text) {
  return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
}

/** Appends `text` to `parent`, each word start that a typed word begins wrapped in <mark>. */
function appendHighlighted(parent, text, typed) {
  const prefixes = fold(typed).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const folded = fold(text);
  const words = folded.length === text.length ? folded.matchAll(/[\p{L}\p{N}]+/gu) : [];
  let done = 0;
  for (const word of words) {
    const prefix = prefixes.filter((p) => word[0].startsWith(p)).sort((a, b) => b.length - a.length)[0];
    if (!prefix) continue;
    const mark = document.createElement("mark");
    mark.textContent = text.slice(word.index, word.index + prefix.length);
    parent.append(text.slice(done, word.index), mark);
    done = word.index + prefix.length;
  }
  parent.append(text.slice(done));
}

/** The expansion's codes, each with the version of its code system: the code's own, else the
 * one the expansion names in its `used-codesystem` parameter (`system|version`). */
function withVersions(expansion) {
  const used = new Map(
    (expansion?.parameter || [])
      .filter((p) => p.name === "used-codesystem" && typeof p.valueUri === "string")
      .map((p) => p.valueUri.split("|"))
  );
  return (expansion?.contains || []).map((item) => ({ ...item, version: item.version ?? used.get(item.system) }));
}

function element(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

export class TermsearchAutocomplete extends HTMLElement {
  static observedAttributes = ["label", "placeholder"];

  #input;
  #listbox;
  #status;
  #items = [];
  #active = -1;
  #timer = 0;
  #request = null;
  #value = null;
  #shownFor = ""; // the text the suggestions shown answer
  #reported = true; // whether what the user did with them was reported

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = TEMPLATE;
    this.#input = root.getElementById("input");
    this.#listbox = root.getElementById("listbox");
    this.#status = root.getElementById("status");
    this.#input.addEventListener("input", () => this.#schedule());
    this.#input.addEventListener("keydown", (event) => this.#onKey(event));
    this.#input.addEventListener("blur", () => {
      this.#close();
      if (!this.#reported && this.#shownFor) this.#report({ action: "abandoned", shown: this.#items.length });
    });
    this.#listbox.addEventListener("mousedown", (event) => event.preventDefault()); // keep the focus
    this.#listbox.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) this.#select(Number(option.dataset.index));
    });
  }

  connectedCallback() {
    this.attributeChangedCallback();
  }

  attributeChangedCallback() {
    this.shadowRoot.querySelector("label").textContent = this.getAttribute("label") || "";
    this.#input.placeholder = this.getAttribute("placeholder") || "";
  }

  /** The selected Coding, or null. */
  get value() {
    return this.#value;
  }

  get valueSet() {
    return this.getAttribute("valueset") || `${this.getAttribute("system")}?fhir_vs`;
  }

  #number(name, fallback) {
    const value = Number(this.getAttribute(name));
    return Number.isFinite(value) && this.hasAttribute(name) ? value : fallback;
  }

  #schedule() {
    this.#value = null;
    clearTimeout(this.#timer);
    const text = this.#input.value;
    if (text.trim().length < this.#number("min-chars", 2)) {
      this.#request?.abort();
      this.#show([], "");
      return;
    }
    this.#timer = setTimeout(() => this.#search(text), this.#number("debounce", 150));
  }

  async #search(text) {
    this.#request?.abort();
    const request = (this.#request = new AbortController());
    const params = new URLSearchParams({
      url: this.valueSet,
      filter: text,
      count: String(this.#number("count", 10)),
      activeOnly: "true",
    });
    const headers = { Accept: "application/fhir+json" };
    if (this.hasAttribute("api-key")) headers["X-API-Key"] = this.getAttribute("api-key");
    const endpoint = (this.getAttribute("endpoint") || "/fhir").replace(/\/$/, "");
    this.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(`${endpoint}/ValueSet/$expand?${params}`, { headers, signal: request.signal });
      const body = await response.json();
      if (!response.ok) throw new Error(body.issue?.[0]?.details?.text || response.statusText);
      this.#show(withVersions(body.expansion), text);
    } catch (error) {
      if (error.name === "AbortError") return;
      this.#show([], text);
      this.#status.textContent = `Search failed: ${error.message}`;
    } finally {
      if (this.#request === request) this.removeAttribute("aria-busy");
    }
  }

  #show(items, text) {
    this.#items = items;
    this.#shownFor = text;
    this.#reported = !text;
    this.#listbox.replaceChildren(...items.map((item, index) => this.#option(item, index, text)));
    this.#status.textContent = text ? (items.length ? `${items.length} suggestions` : "No matches") : "";
    if (items.length) this.#open();
    else this.#close();
  }

  #option(item, index, text) {
    const option = element("li");
    option.id = `option-${index}`;
    option.setAttribute("role", "option");
    option.setAttribute("aria-selected", "false");
    option.dataset.index = String(index);
    option.dataset.code = item.code;
    const display = element("span", "display");
    appendHighlighted(display, item.display || item.code, text);
    const meta = element("span", "meta");
    const code = element("span", "code");
    code.textContent = item.code;
    meta.append(code, ` · ${systemName(item.system)}`);
    option.append(display, meta);
    const matched = (item.extension || []).find((extension) => extension.url === MATCHED_TERM)?.valueString;
    if (matched && fold(matched) !== fold(item.display || "")) {
      const line = element("span", "matched");
      line.append("matched: ");
      appendHighlighted(line, matched, text);
      option.append(line);
    }
    return option;
  }

  #onKey(event) {
    const open = !this.#listbox.hidden;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!this.#items.length) return;
      event.preventDefault();
      if (!open) this.#open();
      this.#move(event.key === "ArrowDown" ? 1 : -1);
    } else if (event.key === "Enter" && open && this.#active >= 0) {
      event.preventDefault();
      this.#select(this.#active);
    } else if (event.key === "Escape") {
      event.preventDefault();
      if (open) this.#close();
      else this.#input.value = "";
    }
  }

  #move(step) {
    const count = this.#items.length;
    this.#active = this.#active < 0 && step < 0 ? count - 1 : (this.#active + step + count) % count;
    for (const option of this.#listbox.children) {
      option.setAttribute("aria-selected", String(Number(option.dataset.index) === this.#active));
    }
    const option = this.#listbox.children[this.#active];
    this.#input.setAttribute("aria-activedescendant", option.id);
    option.scrollIntoView({ block: "nearest" });
  }

  #select(index) {
    const item = this.#items[index];
    const coding = { system: item.system, version: item.version, code: item.code, display: item.display };
    this.#value = coding;
    this.#input.value = item.display;
    this.#close();
    this.#status.textContent = `Selected ${item.display} (${item.code})`;
    this.#report({ action: "chose", system: item.system, code: item.code, rank: index + 1, shown: this.#items.length });
    this.dispatchEvent(new CustomEvent("change", { detail: coding, bubbles: true, composed: true }));
  }

  /** Tell the server what the user did with the suggestions (learning from use); never in the way. */
  #report(event) {
    this.#reported = true;
    const target = this.getAttribute("feedback") || "/feedback";
    if (target === "off") return;
    const endpoint = this.getAttribute("endpoint") || "/fhir";
    const url = this.hasAttribute("feedback") ? target : new URL(target, new URL(endpoint, location.href)).href;
    const headers = { "Content-Type": "application/json" };
    if (this.hasAttribute("api-key")) headers["X-API-Key"] = this.getAttribute("api-key");
    const body = { query: this.#shownFor, surface: "widget", system: event.system || this.getAttribute("system") || null, ...event };
    fetch(url, { method: "POST", headers, body: JSON.stringify(body), keepalive: true }).catch(() => {});
  }

  #open() {
    this.#listbox.hidden = false;
    this.#input.setAttribute("aria-expanded", "true");
  }

  #close() {
    this.#listbox.hidden = true;
    this.#active = -1;
    this.#input.setAttribute("aria-expanded", "false");
    this.#input.removeAttribute("aria-activedescendant");
    for (const option of this.#listbox.children) option.setAttribute("aria-selected", "false");
  }
}

if (!customElements.get("termsearch-autocomplete")) {
  customElements.define("termsearch-autocomplete", TermsearchAutocomplete);
}
