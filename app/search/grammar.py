"""The clinical query grammar: how clinicians write, read as the terminologies word it.

Each rule is a small tested unit that rewrites the query and says what it read; the reading is
searched beside the query (a rewrite, like a spelling correction) and every row it finds shows
the rules in its ``why``. In order:

- **subject**: who the query is about and its linking verb left out ("he is very tall" → "very
  tall", "my son keeps getting ear infections" → "ear infections"; "can't" stays);
- **shorthand**: "w/o" → "without", "w/" → "with", "c/b" → "complicated by", "2/2", "caused by" → "due to",
  "r/o" → "suspected", "s/p" → "status post", "h/o" and "hx of" → "history of", "fx" →
  "fracture", "lac" → "laceration", "first visit" → "initial encounter", "d/o" → "disorder",
  "perf" → "perforation", "b/l" → "bilateral", "lt"/"rt" → "left"/"right", words that carry
  nothing ("pt", "c/o", "y/o") left out;
- **sides**: a capital "R" or "L" before a word, "(R)", the eyes' "OD", "OS", "OU", the ears'
  "AD", "AS", "AU" (where the query is about an ear), limbs ("LLE" → "left lower extremity") and
  lung lobes ("RUL" → "right upper lobe");
- **other vocabularies' labels**: a SNOMED CT semantic tag left out ("Gallstone (disorder)");
- **injuries as people say them**: "pulled" or "strained" a part → "strain of", "sprained" or
  "twisted" → "sprain of" ("pulled hamstring" → "strain of hamstring");
- **sites and courses**: "ca" of an organ → "cancer" ("colon ca"), "AE" of an obstructive airway
  disease → "acute exacerbation" ("COPD w/ AE"), an uncontrolled diabetes → "with hyperglycemia";
- **measurements**: a lab value or vital sign outside its range as its finding ("Na 128" →
  "hyponatremia", "HR 140" → "tachycardia"), a growth measurement beyond the charts' usual centiles
  as its finding ("OFC <3rd centile" → "microcephaly"), a score or a value in range left out ("CHA2DS2-VASc
  3"; :mod:`app.search.measures`);
- **dates** left out: a year or a month and year ("hx of MI 2019", "s/p CABG 3/2015"), a day and
  month after "dx" or "since" ("DVT dx 10/14") code nothing and read as something else (COVID-19);
- **numbers**: roman numerals of a stage, grade, type or class as digits ("stage IV" → "stage
  4"), "CKD 3b" → "CKD stage 3b", a CKD of stage 5 on dialysis → "end stage renal disease" (N18.6);
- **spinal levels** to their region ("C5-6" → "cervical C5-C6");
- **pregnancy**: weeks of gestation to their trimester ("at 30 wks" → "30 weeks gestation third
  trimester"), "2nd tri" → "second trimester";
- **HPO's terms a number defines**, only where HPO is searched: the age a disease began at as its
  onset term, the share of patients a feature is seen in as its frequency term ("in roughly a
  third of patients" → "frequent"), a degree said alone as its severity term ("only mildly
  affected" → "mild"; :mod:`app.search.definitions`);
- **metastases**, only where the scope holds ICD-10-CM (which codes them at the site they reached,
  C77-C79): "metastatic to X", "mets to X", "X mets" → "secondary malignant neoplasm of X";
- **history and status**, only where the scope holds a terminology that codes them (ICD-10-CM's
  Z85-Z87, Z89-Z99, Z79): "history of X" → "personal history of X" (a past myocardial infarction →
  "old myocardial infarction", I25.2, as ICD-10-CM's index has it); "status post" an "-ectomy"
  → "acquired absence of" the organ; an amputation → "acquired absence of" the part; a
  transplant → its "transplant status"; a joint replacement → "presence of artificial ... joint";
  "on home O2" → "dependence on supplemental oxygen"; "on dialysis"; "on warfarin" (with its dose,
  "long term", or a clause after it) → "long term (current) use of anticoagulants"; "former smoker"
  → "personal history of nicotine dependence". Elsewhere (HPO) the prefix is left out and the finding kept;
- **treatments**: a condition said to be treated with a long-term drug ("afib on warfarin", "GAD on
  sertraline") is read alone, since it is coded first, unless the drug may have caused it or its
  code states the control ("gout on furosemide", "gestational diabetes on insulin");
- **ruled out**: where no terminology in scope codes "without" (HPO), a finding negated after what
  the query states is left out ("bilat epicanthic folds, no telecanthus" → "bilateral epicanthic
  folds"); ICD-10-CM's "without" qualifiers read it (:mod:`app.search.details`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from app.search import definitions, measures

STATUS_SYSTEMS = frozenset({"icd10cm"})  # terminologies with codes for history and status
# Ordinary English words that are also abbreviations of the tables ("HE", "AS", "ALL", "MS"): read
# as an abbreviation only where written as one, in capitals ("he is very tall" is no HE).
ORDINARY_WORDS = frozenset(
    "a ad all am an and any are as at be but by can cap cold do go had has he her hi hit i id if in is it its lot mad me met "
    "ms my no not of oh ok on or our pad pt sad saw she so the to up us was we who you".split()
)


@dataclass
class Reading:
    """The query as the grammar reads it, and what each rule read (for ``why``)."""

    text: str
    said: list[str] = field(default_factory=list)

    def sub(self, pattern: re.Pattern[str], replace: str | Callable[[re.Match[str]], str]) -> None:
        """Apply one rewrite everywhere it matches, noting each change ("'w/o' as 'without'")."""

        def one(match: re.Match[str]) -> str:
            written, out = match.group(0).strip(" ,;"), (replace(match) if callable(replace) else match.expand(replace))
            if out.strip().lower() != written.lower():
                self.said.append(f"'{written}' as '{out.strip()}'" if out.strip() else f"'{written}' left out")
            return out

        self.text = pattern.sub(one, self.text)


def _words(*pairs: tuple[str, str]) -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(pattern, re.IGNORECASE), out) for pattern, out in pairs]


# A coder's keywords in the index's order, the main term first and its modifiers after commas
# ("Cholecystitis, acute, with calculus"; "Fracture, femur, neck, left"): read with the modifiers
# before it and its "with ..." after it ("acute Cholecystitis with calculus"), as names and everyday
# wordings say it. A history, status or encounter is left to the history and status rules.
INDEX_ORDER = re.compile(
    r"^\s*(?!(?:history|status|encounter|screening|admission)\b)([^\W\d_]{3,})\s*,\s*([^\d,]+(?:,[^\d,]+)*?)\s*$",
    re.IGNORECASE,
)
_AFTER_THE_TERM = re.compile(
    r"^(?:with|without|no|not|due to|in|of|on|following|after|from|by|complicating|during)\b", re.IGNORECASE
)
_LISTED = re.compile(r"\b(?:and|or)\b|&", re.IGNORECASE)  # "fever, cough and chills": a list, no index entry
MODIFIER_WORDS = 3  # the most words a modifier of the index has


def _index_order(match: re.Match[str]) -> str:
    parts = [part.strip() for part in match.group(2).split(",") if part.strip()]
    before = [part for part in parts if not _AFTER_THE_TERM.match(part)]
    entry = before and all(len(part.split()) <= MODIFIER_WORDS for part in parts) and not match.group(1).isupper()
    if not entry or _LISTED.search(match.group(2)):
        return match.group(0)  # a sentence, an abbreviation or a list: no index entry
    return " ".join([*before, match.group(1), *(part for part in parts if _AFTER_THE_TERM.match(part))])


SHORTHAND = _words(
    (r"(?<!\w)w/o(?!\w)", "without"),
    (r"(?<!\w)w/(?!o\b)\s*", "with "),
    (r"(?<!\w)c/b(?!\w)", "complicated by"),
    (r"(?<!\w)(?:2/2|d/t|sec(?:ondary)? to|caused by)(?!\w)", "due to"),
    (r"(?<!\w)r/o(?!\w)", "suspected"),
    (r"(?<!\w)(?:s/p|status[- ]post|s\.p\.)(?!\w)", "status post"),
    (r"(?<!\w)(?:h/o|hx of|hx|pmhx?(?: of)?|hist(?:ory)? of)(?!\w)", "history of"),
    (r"(?<!\w)(?:fhx|fam hx|fh)(?: of)?(?!\w)", "family history of"),
    (r"(?<!\w)fxs(?!\w)", "fractures"),
    (r"(?<!\w)fx(?!\w)", "fracture"),
    (r"(?<!\w)lacs?(?!\w)", "laceration"),
    (r"(?<!\w)(?:b/l|bilat|bil)(?!\w)", "bilateral"),
    (r"(?<!\w)(?:lt|lft)\.?(?!\w)", "left"),
    (r"(?<!\w)(?:rt|rgt)\.?(?!\w)", "right"),
    (r"(?<!\w)abd(?!\w)", "abdominal"),
    (r"(?<!\w)exac(?:erb)?(?!\w)", "exacerbation"),
    (r"(?<!\w)inj(?!\w)", "injury"),
    (r"(?<!\w)dz(?!\w)", "disease"),
    (r"(?<!\w)d/o(?!\w)", "disorder"),
    (r"(?<!\w)perf(?!\w)", "perforation"),
    (r"(?<!\w)init(?:ial)?(?: enc(?:ounter)?)?(?!\w)", "initial encounter"),
    (r"(?<!\w)first (?:visit|encounter|presentation)(?!\w)", "initial encounter"),
    (r"(?<!\w)subs(?:equent)? enc(?:ounter)?(?!\w)", "subsequent encounter"),
    (r"(?<!\w)seq(?!\w)", "sequela"),
    (r"(?<!\w)(?:pt'?s?|c/o|y/?o|yrs? old|year old|complains of)(?!\w)", ""),
)
# Who the query is about, and the verb that links them to the finding: "he is very tall", "my
# son keeps getting ear infections", "I have", "she's got"; the finding is what is searched.
SUBJECT = re.compile(
    r"^(?:(?:he|she|they|it|i|we)(?:'s|'m|'re| is| are| am| has| have| had| was| were| gets| get| keeps| seems| looks| feels|"
    r" can't| cannot| doesn't| does not| won't)?|(?:my|our|her|his) (?:son|daughter|child|kid|baby|boy|girl|toddler|husband|wife|"
    r"mum|mom|dad|father|mother)(?:'s| is| has| gets| keeps| seems| looks| was| can't| doesn't)?)"
    r"(?:\s+(?:got|been|getting|having|had))?\s+",
    re.IGNORECASE,
)
_MY = re.compile(r"^(?:my|her|his|their|our)\s+(?=\w)", re.IGNORECASE)
_SIDE = {"R": "right", "L": "left", "B": "bilateral"}
_LIMB = {"U": "upper", "L": "lower"}
_LOBE = {"U": "upper", "M": "middle", "L": "lower"}
# Sides written as clinicians write them: capitals only, so "r/o" or a lower-case word stays.
SIDES = [
    (
        re.compile(r"(?<![\w/])\((R|L)\)|(?<![\w/])(R|L)(?=\s+(?:[A-Za-z]|\d(?:st|nd|rd|th)\b))"),
        lambda m: "right" if (m.group(1) or m.group(2)) == "R" else "left",
    ),
    (re.compile(r"(?<!\w)OD(?!\w)"), lambda m: "right eye"),
    (re.compile(r"(?<!\w)OS(?!\w)"), lambda m: "left eye"),
    (re.compile(r"(?<!\w)OU(?!\w)"), lambda m: "bilateral eyes"),
    (re.compile(r"(?<!\w)([RLB])([UL])E(?!\w)"), lambda m: f"{_SIDE[m.group(1)]} {_LIMB[m.group(2)]} extremity"),
    (re.compile(r"(?<!\w)([RL])([UML])L(?!\w)"), lambda m: f"{_SIDE[m.group(1)]} {_LOBE[m.group(2)]} lobe"),
]
# The ears' sides (AD, AS, AU: also Alzheimer disease, aortic stenosis...) only in a query about an ear.
EAR = re.compile(
    r"\b(?:ears?|hearing|deaf\w*|cerumen|earwax|otitis|otalgia|otorrh\w*|tinnitus|tympan\w*|TM|SNHL|CHL|mastoid\w*)\b",
    re.IGNORECASE,
)
EAR_SIDES = [
    (re.compile(r"(?<!\w)AD(?!\w)"), lambda m: "right ear"),
    (re.compile(r"(?<!\w)AS(?!\w)"), lambda m: "left ear"),
    (re.compile(r"(?<!\w)AU(?!\w)"), lambda m: "bilateral ears"),
]
# SNOMED CT's semantic tags, as a fully specified name ends ("Essential hypertension (disorder)").
SEMANTIC_TAG = re.compile(
    r"\((?:disorder|finding|morphologic abnormality|situation|event|clinical finding|observable entity|"
    r"body structure|procedure|qualifier value|navigational concept)\)\s*$",
    re.IGNORECASE,
)
INJURED = _words(
    (r"\b(?:pulled|strained)\s+(?:(?:a|my|his|her|their|the)\s+)?(?=\w)", "strain of "),
    (r"\b(?:sprained|twisted)\s+(?:(?:a|my|his|her|their|the)\s+)?(?=\w)", "sprain of "),
)
# Where a cancer spread to, as ICD-10-CM codes it (C77-C79, the site reached): "breast ca metastatic
# to bone", "mets to liver", "brain mets", "metastases to the lungs".
_REACHED = {
    "spine": "bone",
    "spinal": "bone",
    "vertebral": "bone",
    "bones": "bone",
    "lungs": "lung",
    "nodes": "lymph nodes",
    "ln": "lymph nodes",
    "lymph node": "lymph nodes",
    "hepatic": "liver",
    "cerebral": "brain",
    "osseous": "bone",
}
_SITES = (
    r"bone|bones|spine|spinal|vertebral|osseous|liver|hepatic|lung|lungs|brain|cerebral|adrenal|peritoneum|pleura|skin|"
    r"lymph nodes?|nodes|ln|ovary|kidney"
)
METASTASIS = re.compile(
    rf"^(?:.*?\b(?:metastatic|metastasized|metastasised|mets|metastas[ie]s)\s+(?:(?:disease|cancer|carcinoma|ca|tumou?r|malignancy)\s+)?(?:to|in)\s+(?:the\s+)?({_SITES})"
    rf"|({_SITES})\s+(?:mets|metastas[ie]s))\b.*$",
    re.IGNORECASE,
)


def _metastasis(match: re.Match[str]) -> str:
    site = (match.group(1) or match.group(2)).lower()
    return f"secondary malignant neoplasm of {_REACHED.get(site, site)}"


_ORGANS = (
    r"colon|colorectal|rectal|rectum|breast|lung|prostate|bladder|pancreas|pancreatic|ovarian|ovary|cervical|cervix|gastric|"
    r"stomach|esophageal|oesophageal|esophagus|renal|kidney|thyroid|skin|liver|hepatic|uterine|endometrial|head and neck|"
    r"tongue|laryngeal|testicular|brain|bone|anal|bile duct"
)
CANCER = re.compile(rf"\b({_ORGANS})\s+ca\b|\bca\s+(?:of\s+(?:the\s+)?)?({_ORGANS})\b", re.IGNORECASE)
# A diabetes said to be uncontrolled is coded "with hyperglycemia" (ICD-10-CM's index: "Diabetes,
# uncontrolled, meaning hyperglycemia").
DIABETES = re.compile(r"\b(?:t[12]dm|dm ?[12]?|diabetes|diabetic|iddm|niddm)\b", re.IGNORECASE)
UNCONTROLLED = re.compile(
    r"\b(?:uncontrolled|(?:poorly|inadequately|suboptimally|not well|not) controlled|out of control)\b", re.IGNORECASE
)
AIRWAY = re.compile(r"\b(?:COPD|asthma|bronchiectasis|emphysema|chronic bronchitis)\b", re.IGNORECASE)
EXACERBATION = re.compile(r"(?<!\w)AE(?!\w)")
# A year (1900-2099), or a month and year, standing alone: "MI 2019", "CABG 3/2015", "(2015)".
DATE = re.compile(r"(?:\s+(?:in|since|from)\s+|\s*\(\s*|\s+|^)(?:(?:0?[1-9]|1[0-2])[/-])?(?:19|20)\d{2}(?!\w)\s*\)?")
# A day and month said as when something was diagnosed or began ("L popliteal DVT dx 10/14", "since
# 2/3"): no fraction of a score ("4/5 power", "3/6 murmur"), which no such word precedes.
DAY_DATE = re.compile(
    r"(?:\b(?:dx|dx'd|diagnosed)\s+(?:on\s+)?|\s+(?:on|since)\s+)(?:[0-3]?\d)/(?:[0-3]?\d)(?:/(?:19|20)?\d{2})?(?![\w/])",
    re.IGNORECASE,
)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6"}
_SHORT = {"cl": "class", "gr": "grade"}  # "obesity cl II": class 2
# A chronic kidney disease of stage 5 that needs dialysis is an end stage renal disease (ICD-10-CM's
# N18.6 includes "chronic kidney disease requiring chronic dialysis").
_ON_DIALYSIS = (
    r"(?:on|requiring|needing|with)\s+(?:maintenance\s+|chronic\s+|regular\s+)?(?:(?:hemo|haemo|peritoneal\s+)?dialysis|hd|pd)\b"
)
NUMBERS: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (
        re.compile(rf"\b(?:ckd|chronic kidney disease)\s*(?:stage\s*)?(?:5|v)\s+(?={_ON_DIALYSIS})", re.IGNORECASE),
        "end stage renal disease ",
    ),
    (
        re.compile(r"\b(stage|grade|type|class|cl|gr)\s+(i{1,3}|iv|vi?)([ab])?\b", re.IGNORECASE),
        lambda m: f"{_SHORT.get(m.group(1).lower(), m.group(1))} {_ROMAN[m.group(2).lower()]}{m.group(3) or ''}",
    ),
    (
        re.compile(r"\b(ckd)\s*(?:stage\s*)?(iv|v|i{1,3}|[1-5])([ab])?\b", re.IGNORECASE),
        lambda m: f"{m.group(1)} stage {_ROMAN.get(m.group(2).lower(), m.group(2))}{m.group(3) or ''}",
    ),
]
_REGIONS = {"C": "cervical", "T": "thoracic", "L": "lumbar", "S": "sacral"}
_SPINE_WORDS = r"radiculopathy|disc|disk|stenosis|fracture|vertebra|spine|level|herniation|hnp|ddd|myelopathy|compression|burst"
SPINAL = re.compile(rf"\b([CTLS])(\d{{1,2}})(?:\s*[-/]\s*([CTLS])?(\d{{1,2}})\b|(?=(?:\s+\w+){{0,2}}\s+(?:{_SPINE_WORDS})))")
_ORDINAL = {"1": "first", "2": "second", "3": "third", "1st": "first", "2nd": "second", "3rd": "third"}
OBSTETRIC = re.compile(
    r"pregnan|gestation|\bGA\b|trimester|\bIUP\b|\bG\dP\d|\bpreg\b|gravid|obstetric|eclampsia|\bGDM\b|\bP?PROM\b|labou?r|placent|previa|fet(?:al|us)",
    re.IGNORECASE,
)
WEEKS = re.compile(r"\b(?:at\s+)?(\d{1,2})(?:\s*\+\s*\d)?\s*(?:wks?|weeks?)(?:\s+(?:gestation|GA|pregnant))?\b", re.IGNORECASE)
_PREGNANT = r"(?:an?\s+)?(?:IUP|intrauterine pregnancy|pregnant|pregnancy|preg|G\dP\d+)"
# A query that only dates a pregnancy ("IUP at 28 wks", "pregnant, 12 weeks"): ICD-10-CM's Z3A
# weeks-of-gestation code, named "28 weeks gestation of pregnancy".
DATING = re.compile(
    rf"^(?:{_PREGNANT}[\s,]+)?(?:at\s+)?(\d{{1,2}})(?:\s*\+\s*\d)?\s*(?:wks?|weeks?)(?:\s+(?:gestation|GA))?(?:[\s,]+{_PREGNANT})?$",
    re.IGNORECASE,
)
TRIMESTER = re.compile(r"\b(1st|2nd|3rd|first|second|third)\s+(?:tri|trimester)\b", re.IGNORECASE)

def _spinal(match: re.Match[str]) -> str:
    first, start, second, end = match.groups()
    region = _REGIONS[first]
    if second and second != first:
        region = "lumbosacral" if (first, second) == ("L", "S") else f"{region} {_REGIONS[second]}"
    level = f"{first}{start}" + (f"-{second or first}{end}" if end else "")
    return f"{region} {level}"


def _weeks(match: re.Match[str]) -> str:
    weeks = int(match.group(1))
    if not 4 <= weeks <= 43:
        return match.group(0)
    trimester = "first" if weeks < 14 else "second" if weeks < 28 else "third"
    return f"{weeks} weeks gestation {trimester} trimester"


# "-ectomy" words → the organ whose absence ICD-10-CM codes (Z90, Z89...); written from the
# terminology's Z90 categories and common surgical usage.
ECTOMIES = {
    **dict.fromkeys(
        ("appendectomy", "appy", "cholecystectomy", "chole", "ccy", "colectomy", "hemicolectomy"),
        "other specified parts of digestive tract",
    ),
    **dict.fromkeys(("hysterectomy", "tah"), "cervix and uterus"),
    **dict.fromkeys(("oophorectomy", "bso"), "ovaries"),
    **dict.fromkeys(("orchiectomy", "prostatectomy", "salpingectomy"), "genital organ(s)"),
    **dict.fromkeys(("pancreatectomy", "whipple"), "pancreas"),
    "splenectomy": "spleen",
    "nephrectomy": "kidney",
    "mastectomy": "breast and nipple",
    "gastrectomy": "stomach [part of]",
    "pneumonectomy": "lung [part of]",
    "lobectomy": "lung [part of]",
    "laryngectomy": "larynx",
    "cystectomy": "other parts of urinary tract",
    "enucleation": "eye",
    "thyroidectomy": "other organs",
    "tonsillectomy": "other organs",
}
# Drugs and their long-term-use classes (ICD-10-CM Z79), from common prescribing.
DRUG_CLASSES = {
    "anticoagulants": "anticoagulation anticoagulants anticoagulant warfarin coumadin apixaban eliquis rivaroxaban xarelto "
    "dabigatran pradaxa edoxaban enoxaparin lovenox heparin doac doacs blood thinner thinners",
    "antiplatelet drugs": "clopidogrel plavix ticagrelor brilinta prasugrel antiplatelet antiplatelets dapt",
    "aspirin": "aspirin asa",
    "insulin": "insulin lantus glargine humalog novolog lispro",
    "oral hypoglycemic drugs": "metformin glipizide glyburide glimepiride sitagliptin januvia pioglitazone "
    "oral hypoglycemics hypoglycemics",
    "systemic steroids": "prednisone prednisolone dexamethasone methylprednisolone hydrocortisone "
    "steroids steroid corticosteroids",
    "inhaled steroids": "fluticasone budesonide beclomethasone inhaled steroids ics",
    "opiate analgesic": "oxycodone hydrocodone morphine methadone fentanyl opioids opioid opiates tramadol",
    "non-steroidal anti-inflammatories (NSAID)": "ibuprofen naproxen nsaids nsaid diclofenac meloxicam celecoxib",
    "immunosuppressive biologic": "adalimumab humira infliximab remicade etanercept enbrel rituximab tocilizumab "
    "biologic biologics",
    "calcineurin inhibitor": "tacrolimus cyclosporine",
    "inhibitors of nucleotide synthesis": "mycophenolate cellcept azathioprine",
    "immunomodulators and immunosuppressants": "methotrexate hydroxychloroquine sulfasalazine immunosuppressants",
    "hormonal contraceptives": "ocp ocps birth control contraceptive pill",
    "bisphosphonates": "alendronate fosamax risedronate bisphosphonate bisphosphonates",
    "antibiotics": "antibiotics antibiotic doxycycline",
}
_DRUGS = {drug: cls for cls, drugs in DRUG_CLASSES.items() for drug in sorted(drugs.split(), key=len)}
# Common long-term drugs of no class of their own in Z79 (its Z79.899 "other"), by what they treat: a
# condition said to be treated with one is read alone (:data:`_TREATED`), as with the drugs above.
_DIURETICS = "hydrochlorothiazide hctz chlorthalidone furosemide lasix bumetanide"
_STATINS = "atorvastatin simvastatin rosuvastatin pravastatin statin statins"
_ANTIPSYCHOTICS = "quetiapine olanzapine risperidone aripiprazole haloperidol clozapine antipsychotics"
OTHER_DRUGS = frozenset(
    f"amlodipine nifedipine diltiazem verapamil lisinopril enalapril ramipril losartan valsartan irbesartan "
    f"metoprolol atenolol bisoprolol carvedilol propranolol {_DIURETICS} spironolactone antihypertensives {_STATINS} "
    f"digoxin amiodarone sertraline fluoxetine citalopram escitalopram paroxetine venlafaxine duloxetine bupropion "
    f"mirtazapine trazodone ssri ssris antidepressants {_ANTIPSYCHOTICS} lithium lamotrigine valproate depakote "
    f"levetiracetam keppra phenytoin carbamazepine oxcarbazepine topiramate gabapentin pregabalin antiepileptics "
    f"donepezil memantine levodopa carbidopa sinemet methylphenidate adderall levothyroxine synthroid methimazole "
    f"propylthiouracil omeprazole pantoprazole esomeprazole lansoprazole ppi famotidine albuterol tiotropium "
    f"montelukast allopurinol febuxostat colchicine tamsulosin finasteride mesalamine".split()
)
_DOSE = re.compile(r"\s+\d.*$")  # "amlodipine 10mg daily": the drug
_TAKEN_FOR = re.compile(r"\s+(?:long[- ]term|chronically|daily|lifelong|for life|indefinitely)$")
# A former smoker's history, ICD-10-CM's "History, personal, nicotine dependence" (Z87.891).
FORMER_SMOKER = re.compile(
    r"\b(?:(?:former|ex-?|past|previous|prior|reformed)\s*(?:cigarette\s+)?smoker|quit smoking|stopped smoking)\b", re.IGNORECASE
)
# Conditions a drug named with them may have caused, or whose code says how they are controlled:
# there "on" is no treatment to leave out (E03.2 hypothyroidism due to amiodarone, G21.11
# neuroleptic parkinsonism, O24.414 gestational diabetes controlled by insulin).
_WITH_THEIR_DRUG = [
    (re.compile(pattern, re.IGNORECASE), frozenset(drugs.split()))
    for pattern, drugs in (
        (r"hypothyroid", "amiodarone lithium"),
        (r"\bgout", _DIURETICS),
        (r"parkinson|dystoni|dyskinesi|akathisi|\beps\b|extrapyramidal", _ANTIPSYCHOTICS),
        (r"tremor", "lithium valproate depakote"),
        (r"neutropeni|agranulocytosis", "clozapine methimazole propylthiouracil"),
        (r"myopath|myositis|rhabdo", _STATINS),
        (r"diabetes insipidus", "lithium"),
        (r"gestational|\bgdm|pregnan", DRUG_CLASSES["insulin"] + " " + DRUG_CLASSES["oral hypoglycemic drugs"]),
    )
]
_PHRASE_DRUGS = {
    "blood thinner": "anticoagulants",
    "blood thinners": "anticoagulants",
    "birth control": "hormonal contraceptives",
    "oral hypoglycemics": "oral hypoglycemic drugs",
    "inhaled steroids": "inhaled steroids",
    "contraceptive pill": "hormonal contraceptives",
}
_ON = re.compile(
    r"^(?:on|takes|taking|uses|using)\s+(?:chronic\s+|long[- ]term\s+|daily\s+|home\s+|lifelong\s+)*(.+)$", re.IGNORECASE
)
DEPENDENCE = _words(
    (r"^(?:on\s+)?(?:home\s+)?(?:o2|oxygen)(?:\s+at home|\s+dependent)?$", "dependence on supplemental oxygen"),
    (r"^(?:on\s+)?(?:hemo|peritoneal\s+)?dialysis(?:\s+dependent)?$|^on (?:hd|pd)$", "dependence on renal dialysis"),
    (r"^(?:on\s+)?(?:a\s+)?(?:vent|ventilator)(?:\s+dependent)?$", "dependence on respirator"),
    (r"^wheelchair(?:\s+(?:bound|user|dependent))?$", "dependence on wheelchair"),
)
# A condition and the drug it is treated with ("afib on warfarin", "RA taking methotrexate"): the
# condition is what is coded first (the drug's long-term use, Z79, beside it), so it is read alone.
_TREATED = re.compile(
    r"^(.+?)\s+(?:on|takes|taking|treated with)\s+(?:chronic\s+|long[- ]term\s+|daily\s+|home\s+|lifelong\s+)*(.+)$",
    re.IGNORECASE,
)
_AMPUTATION = re.compile(
    r"^(?:status post\s+)?(?:(.+?)\s+amputation|amputation of (?:the\s+)?(.+)|(.+?)\s+amputee|amputated\s+(.+))$", re.IGNORECASE
)
_STATUS_POST = re.compile(r"^status post\s+(.+)$", re.IGNORECASE)
# A finding a note rules out after what it states ("bilat epicanthic folds, no telecanthus"): a
# terminology without "without" qualifiers (HPO) searches what is stated.
NEGATED_CLAUSE = re.compile(r"\s*[,;]\s*(?:no|not|without|denies|negative for|neg for)\b[^,;]*", re.IGNORECASE)
_HISTORY = re.compile(r"^(family\s+)?history of\s+(.+)$", re.IGNORECASE)
_REPLACED = re.compile(
    r"\b(?:(knee|hip|shoulder|elbow|ankle)\s+(?:replacement|arthroplasty)|(t|total\s+)?(k|h)a)\b", re.IGNORECASE
)
_TRANSPLANT = re.compile(r"^(.+?)\s+(?:transplant|transplantation|tx)$", re.IGNORECASE)
# A past myocardial infarction is ICD-10-CM's I25.2 *Old myocardial infarction* (its index: "History,
# personal, myocardial infarction (old)"), not a Z code of personal history.
_INFARCTION = re.compile(
    r"^(?:an?\s+)?(?:(?:acute|non-?)?\s*(?:st elevation\s+)?(?:\(n?stemi\)\s+)?myocardial infarction|mi|n?stemi|heart attack)$",
    re.IGNORECASE,
)


def _status(text: str, coded: bool) -> tuple[str, str] | None:
    """(reading, what was read) of a history or status query; with ``coded`` False (no terminology
    in scope codes status) the finding alone."""
    text = text.strip()
    for pattern, wording in DEPENDENCE:
        if pattern.match(text):
            return (wording, f"'{text}' as '{wording}'") if coded else None
    if (on := _ON.match(text)) and (cls := _drug_class(on.group(1))) is not None:
        wording = f"long term (current) use of {cls}"
        return (wording, f"'{text}' as '{wording}'") if coded else None
    if amputated := _AMPUTATION.match(text):
        part = next(group for group in amputated.groups() if group)
        wording = f"acquired absence of {part}"
        return (wording, f"'{text}' as '{wording}'") if coded else (part, f"'{text}' as '{part}'")
    if after := _STATUS_POST.match(text):
        done = after.group(1)
        if not coded:
            return done, "'status post' left out"
        side = next((s for s in ("right", "left", "bilateral") if re.search(rf"\b{s}\b", done)), "")
        if replaced := _REPLACED.search(done):
            joint = (replaced.group(1) or {"k": "knee", "h": "hip"}[replaced.group(3).lower()]).lower()
            wording = f"presence of {side + ' ' if side else ''}artificial {joint} joint"
            return wording, f"'{text}' as '{wording}'"
        if transplanted := _TRANSPLANT.match(done):
            wording = f"{transplanted.group(1)} transplant status"
            return wording, f"'{text}' as '{wording}'"
        for word in re.findall(r"[a-z]+", done.lower()):
            if word in ECTOMIES:
                organ = ECTOMIES[word]
                sided = side and organ == "breast and nipple"
                wording = f"acquired absence of {side + ' ' if sided else ''}{organ}"
                return wording, f"'{text}' as '{wording}'"
        wording = _personal_history(done)
        return wording, f"'{text}' as '{wording}'"
    if history := _HISTORY.match(text):
        family, finding = history.groups()
        if not coded:
            return finding, f"'{'family ' if family else ''}history of' left out"
        wording = f"family history of {finding}" if family else _personal_history(finding)
        return wording, f"'{text}' as '{wording}'"
    return None


def _drug_class(text: str) -> str | None:
    """The long-term-use class (:data:`DRUG_CLASSES`) of a drug or drug class named alone, or with
    its dose, how long it is taken or a clause after it ("coumadin long term, INR goal 2-3")."""
    return _class_of(_drug(text))


def _class_of(drug: str) -> str | None:
    """The long-term-use class of a drug's name (:func:`_drug`)."""
    return _PHRASE_DRUGS.get(drug) or _DRUGS.get(drug)


def _drug(text: str) -> str:
    """A drug's name, without its dose, how long it is taken or a clause after it."""
    return _TAKEN_FOR.sub("", _DOSE.sub("", text.split(",")[0].strip().lower().rstrip(".")))


def _treats(condition: str, text: str) -> bool:
    """Whether ``text`` names a long-term drug or drug class (with or without its dose) that is a
    treatment of ``condition``, not a cause or a control its code states (:data:`_WITH_THEIR_DRUG`)."""
    drug = _drug(text)
    known = _class_of(drug) is not None or drug in OTHER_DRUGS
    return known and not any(pattern.search(condition) and drug in drugs for pattern, drugs in _WITH_THEIR_DRUG)


def _personal_history(finding: str) -> str:
    """The terminology's wording of a past ``finding`` (its first clause names it)."""
    infarction = _INFARCTION.match(finding.split(",")[0].strip())
    return "old myocardial infarction" if infarction else f"personal history of {finding}"


def _measurements(reading: Reading) -> None:
    """A lab value or vital sign outside its range as its finding, a score or a value within its
    range left out (:mod:`app.search.measures`); a query that is only values is kept as typed."""
    before, said = reading.text, len(reading.said)
    reading.sub(measures.BLOOD_PRESSURE, measures.pressure)
    reading.sub(measures.GROWTH, measures.growth)
    reading.sub(measures.WEIGHT_CHANGE, measures.weight_change)
    reading.sub(measures.MEASUREMENT, measures.measurement)
    if re.search(r"[^\W\d]", reading.text):
        reading.text = re.sub(r"\s+([,;])", r"\1", reading.text)
    else:
        reading.text, reading.said[said:] = before, []


def _defined_by_a_number(reading: Reading) -> None:
    """HPO's onset, frequency and severity terms from the age, the share of patients or the degree
    the query states."""
    reading.sub(definitions.SEVERITY, definitions.severity)
    if definitions.ONSET_CUE.search(reading.text):
        reading.sub(definitions.ONSET_AGE, definitions.onset)
    if definitions.FREQUENCY_CUE.search(reading.text):
        reading.sub(definitions.FREQUENCY, definitions.frequency)


def _subject(match: re.Match[str]) -> str:
    """What is left of "he is", "my son keeps", "I have": a verb that carries meaning stays ("can't")."""
    kept = re.search(r"(can't|cannot|doesn't|does not|won't)\s*$", match.group(0), re.IGNORECASE)
    return f"{kept.group(1)} " if kept else ""


def read(query: str, systems: frozenset[str], expand: Callable[[Reading], None] = lambda reading: None) -> Reading:
    """The query as the grammar reads it for a scope of ``systems``; ``expand`` writes out its
    abbreviations (:mod:`app.search.rewrite`) before the history and status rules read it."""
    reading = Reading(query)
    reading.sub(SEMANTIC_TAG, "")
    reading.sub(SUBJECT, _subject)
    reading.sub(_MY, "")
    for pattern, replacement in SHORTHAND:
        reading.sub(pattern, replacement)
    reading.sub(INDEX_ORDER, _index_order)
    _measurements(reading)
    for pattern, side in SIDES + (EAR_SIDES if EAR.search(reading.text) else []):
        reading.sub(pattern, side)
    for pattern, replacement in INJURED:
        reading.sub(pattern, replacement)
    reading.sub(CANCER, lambda m: f"{m.group(1)} cancer" if m.group(1) else f"cancer of {m.group(2)}")
    if DIABETES.search(reading.text):
        reading.sub(UNCONTROLLED, "with hyperglycemia")
    if AIRWAY.search(reading.text):
        reading.sub(EXACERBATION, "acute exacerbation")
    if re.search(r"[^\W\d]{2}", DAY_DATE.sub(" ", DATE.sub(" ", reading.text))):  # a date alone is kept: it is the query
        reading.sub(DATE, " ")
        reading.sub(DAY_DATE, " ")
    for pattern, number in NUMBERS:
        reading.sub(pattern, number)
    reading.sub(SPINAL, _spinal)
    if (dated := DATING.match(reading.text)) and 8 <= int(dated.group(1)) <= 42:
        reading.sub(DATING, lambda m: f"{int(m.group(1))} weeks gestation of pregnancy")
    elif OBSTETRIC.search(reading.text):
        reading.sub(WEEKS, _weeks)
    reading.sub(TRIMESTER, lambda m: f"{_ORDINAL.get(m.group(1).lower(), m.group(1).lower())} trimester")
    if "hpo" in systems:
        _defined_by_a_number(reading)
    coded = bool(systems & STATUS_SYSTEMS)  # a terminology in scope codes metastases, history, status and absence
    if not coded:
        reading.sub(NEGATED_CLAUSE, "")
    reading.text = re.sub(r"\s+([,;])", r"\1", re.sub(r"\s+", " ", reading.text)).strip(" ,;")
    expand(reading)
    if coded:
        reading.sub(METASTASIS, _metastasis)
        reading.sub(FORMER_SMOKER, "personal history of nicotine dependence")
    if (status := _status(reading.text, coded)) is not None and status[0] != reading.text:
        reading.text, said = status
        reading.said.append(said)
    elif (treated := _TREATED.match(reading.text)) and _treats(treated.group(1), treated.group(2)):
        reading.said.append(f"'{reading.text[treated.end(1):].strip()}' left out (a treatment: its condition is coded first)")
        reading.text = treated.group(1).strip(" ,;")
    return reading
