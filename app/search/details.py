"""Detail agreement: what a query states (side, encounter, numbers as type, stage, grade or
weeks, severity, with or without, history) against what a concept's name carries.

A coder records the code that carries exactly the details the query states: "fracture of right
femoral neck, initial encounter" is S72.001A, not the sequela code nor the left one, and "DVT of
left leg" is not the unspecified-side code. These agreements and conflicts are features of the
ranker (:mod:`app.search.features`), so it learns how much each weighs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.search import measures
from indexer.lexical.normalise import fold, tokens

_SIDE = re.compile(r"\b(right|left|bilateral|both)\b")
_UNSPECIFIED_SIDE = re.compile(
    r"\bunspecified (?:side|ear|eye|lower leg|upper arm|hand|foot|knee|hip|shoulder|"
    r"femur|tibia|fibula|humerus|radius|ulna|ankle|wrist|elbow|leg|arm|lung|breast|kidney|"
    r"ovary|fallopian tube|toe|finger|thumb|great toe|lower limb|upper limb|limb)"
)
_ENCOUNTER = (
    ("sequela", re.compile(r"\b(?:sequela|sequelae|late effects?)\b")),
    ("subsequent", re.compile(r"\b(?:subsequent|follow[- ]?up|healing|f/u|routine healing)\b")),
    ("initial", re.compile(r"\b(?:initial|first (?:visit|encounter|presentation)|new injury|acute injury|ed visit)\b")),
)
_NUMBER = re.compile(r"\b(\d{1,2}[a-z]?)\b")
# A chromosome's number names what is meant, not a type or stage of it: two that differ conflict
# ("trisomy 13" is no *Trisomy 18*), but one agrees with no name more than a name without it
# ("trisomy 21": Q90.9 *Down syndrome, unspecified*, not Q90.2 *Trisomy 21, translocation*).
_CHROMOSOME = re.compile(r"\b(?:trisomy|monosomy|tetrasomy|chromosome)\s*(\d{1,2})\b")
# A name that is a stage without its number: an end stage renal disease is a chronic kidney disease
# of stage 5 ("CKD stage 5 on dialysis" agrees with N18.6 *End stage renal disease* as with N18.5).
_STAGE_5 = re.compile(r"\b(?:end[- ]stage (?:renal|kidney) (?:disease|failure)|esrd|eskd)\b")
# Severity grades, compared as numbers are ("bipolar I, manic, severe": F31.13 "..., severe", not "..., mild");
# a note's "mod" is moderate. A name's grade the query does not state is a default conflict: the
# ungraded concept or unspecified code is the one meant ("MDD, recurrent": F33.9, not F33.1 "...,
# moderate"; "small head": *Microcephaly*, not *Mild microcephaly*); a grade in parentheses only
# glosses the word before it (E66.01 "Morbid (severe) obesity ...").
_SEVERITY = re.compile(r"\b(mild|moderate|mod|severe|profound)\b")
_SEVERITIES = {"mod": "moderate"}
_GLOSS = re.compile(r"\([^()]*\)")
# A grade that is part of what a name names, not a grade of it ("septic shock" is R65.21 *Severe
# sepsis with septic shock*).
_NAMED_GRADE = re.compile(r"\bsevere (?:sepsis|combined immuno\w*|acute respiratory syndrome|myoclonic epilepsy)\b")
# Both sides or one, either (HPO's *Bilateral ptosis*, *Unilateral cryptorchidism*), which a query that
# states no side does not mean ("droopy eyelids", "undescended testicle"), and a query's one side. A
# right or left name is no conflict: a category without an unspecified side's code codes one of them.
_NAMED_SIDE = re.compile(r"\b(?:bilateral|unilateral)\b")
_ONE_SIDE = re.compile(r"\b(?:unilateral|one[- ]sided|on one side|one of (?:his|her|my|their|the|your) \w+)\b")
# Which way a query and a name say a size, an amount or a rate goes: "smaller", "low", "hypo-" down;
# "bigger", "high", "hyper-" up. A query saying one way against a name saying only the other turns
# the meaning over ("his head is smaller than other babies" is no *Macrocephaly*, "slow heart rate"
# no *Tachycardia*). Words that name a place or a part, not a direction, are left out ("low back",
# "big toe", "hypospadias", "microscopic").
_DIRECTIONS = (
    (
        "down",
        r"small|smaller|smallest|tiny|short|shorter|shortened|narrow|narrower|thin|thinner|thinning|low(?! back)|"
        r"reduced|decreased?|slow|slower|hypo(?!spadia|thalam|phys|gastr|gloss|chondr|pharyn|thenar|tympan)\w*|"
        r"micro(?!scop|b|organism)\w*|brady\w*|oligo\w*",
    ),
    (
        "up",
        r"big(?! toe)|bigger|large|larger|huge|enlarged|enlargement|tall|taller|wide|wider|broad|thick|thicker|"
        r"thickened|thickening|high|raised|elevated|increased?|excessive|excess|fast|faster|rapid|hyper\w*|"
        r"macro(?!phag)\w*|tachy\w*",
    ),
)
_DIRECTION = re.compile(
    "|".join(rf"\b(?P<{name}>{words})\b" for name, words in _DIRECTIONS) + r"|(?P<below><\s*\d)|(?P<above>>\s*\d)"
)
_DIRECTION_OF = {"down": "down", "up": "up", "below": "down", "above": "up"}
# A range a name states ("stage 1 through stage 4 chronic kidney disease"): each number in it.
_RANGE = re.compile(r"\b(\d)\s+through\s+(?:stage\s+)?(\d)\b")
_WITHOUT = re.compile(r"\b(?:without|w/o|with no)\b")
_WITH = re.compile(r"\bwith\b(?! or without| no\b| not\b)")
# A negated qualifier ("without coma", "not intractable", "no psychotic features", "neither coma
# nor ketoacidosis") and a stated one ("with coma", ", intractable,"): the words up to the next
# comma, "with", "without", "and", "but", "because", "due", "for" or "of" ("non" negates its next
# word only, or the rest of its word: "nonsuppurative" is not suppurative; "Laceration without
# foreign body of left index finger" negates no finger; an older code system's "without mention of
# complication" negates the complication). A
# qualifier a name negates is ICD-10-CM's default, coded when nothing is said (E10.10 "...
# without coma", G43.909 "Migraine, unspecified, not intractable, without status migrainosus");
# the fixed phrases that only look like a negation ("not elsewhere classified", "not carried
# out because of ...") are no qualifier.
_NEGATED = re.compile(
    r"\b(?:(?:without|w/o|no|not|neither)\b\s*(?:mention of\s+)?((?:(?!\b(?:with|without|and|but|because|due|for|of)\b)[^,;.])*)"
    r"|non\b[\s-]*(\w*)|\bnon(?!union|complian|adheren|displac)(?=[a-z]{4})(\w+))"
)
# A negation written after its words: "nail not involved", "cornea unaffected" (the one or two words before it).
_NEGATED_AFTER = re.compile(r"((?:\b\w+\s+){1,2})(?:not involved|not affected|uninvolved|unaffected)\b")
_NOT_A_NEGATION = re.compile(r"\bnot (?:elsewhere classified|otherwise specified|carried out|normally found)\b")
_JOINING = frozenset({"nor"})  # "neither coma nor ketoacidosis": a word of the span, not a qualifier
_QUALIFIER = re.compile(r"(?:\bwith\b|,)((?:(?!\b(?:with|without)\b)[^,;])*)")
_OPEN = re.compile(r"\b(?:open|compound)\b(?=.*\b(?:fracture|fx)\b)")
_FAMILY = re.compile(r"\b(?:family (?:history|hx)|fhx|fam hx|history,\s*family)\b")  # and a coder's inverted "history, family"
# A history: said so, or in the past tense of a patient ("I had", "I've had", "as a child") or a note
# ("prior", "former smoker").
_HISTORY = re.compile(
    r"\b(?:history|hx|had|previous|previously|prior|past|former|formerly|used to|years ago)\b|\bh/o\b"
    r"|\b(?:as an? (?:child|kid|baby|teen|teenager)|in childhood)\b"
)
# The side a hemiplegia or monoplegia affects as dominant or not; ICD-10-CM's default when a note
# does not say: the right side dominant, the left non-dominant.
_DOMINANCE = re.compile(r"\b(non-?)?dominant\b")
_DEFAULT_DOMINANCE = {"right": "dominant", "left": "nondominant"}
# ICD-10-CM's codes "in diseases classified elsewhere" (a manifestation: code first the disease) and
# "as the cause of diseases classified elsewhere" (an organism beside the disease it caused): never
# the code a query names first ("pyelonephritis" is N12, not N16; "UTI 2/2 E. coli" N39.0, not B96.20).
_ELSEWHERE = re.compile(r"\bclassified elsewhere\b")
_NONDISPLACED = re.compile(r"\b(?:nondisplaced|non-displaced|undisplaced|not displaced)\b")
# Kinds a query and a name can each name, by family: a name naming only others of the family than
# the query turns the meaning over. ICD-10-CM codes a joint's subluxation (a partial dislocation),
# dislocation and sprain apart below categories named for two ("Dislocation and sprain of joints and
# ligaments of elbow"); a course; a long bone's end ("lower end of radius": distal) and the bone; a
# sickle-cell disease's genotype (D57.0 Hb-SS, D57.2 Hb-SC, D57.4 with thalassemia); the way a squinting
# eye turns ("one of his eyes turns inward" is no *Exotropia*); whether something came within the first
# day or after it (a postpartum hemorrhage "within 24 hours" is O72.1 *Other immediate ...*, not O72.2
# *Delayed and secondary ...*; labour after a membranes' rupture, a loss of consciousness; an
# immediate or delayed hypersensitivity); a neoplasm's behaviour ("h/o colon ca" is Z85.038, no history
# of colon polyps; "breast ca" no in-situ neoplasm of the breast), the in-situ kind read before the
# carcinoma it qualifies.
_TURNS = r"(?:turns?|turning|turned|drifts?|drifting|goes|going)"
_DAY = r"(?:24|twenty[- ]four) ?(?:hours?|hrs?|h)"
_KINDS = {
    "injury": (
        ("subluxation", "subluxations?|subluxed|partial dislocation|partially dislocated"),
        ("dislocation", "dislocations?|dislocated"),
        ("sprain", "sprains?|sprained"),
    ),
    "course": (("subacute", "subacute"), ("acute", "acute"), ("chronic", "chronic")),
    "end": (("upper end", "upper end|proximal"), ("lower end", "lower end|distal"), ("shaft", "shaft")),
    "bone": (
        ("radius", "radius|radial"), ("ulna", "ulna|ulnar"), ("humerus", "humerus|humeral"), ("femur", "femur|femoral"),
        ("tibia", "tibia|tibial"), ("fibula", "fibula|fibular"), ("clavicle", "clavicle|clavicular"),
        ("scapula", "scapula|scapular"),
    ),
    "sickle": (("hb-ss", "hb-?ss|hb ss"), ("hb-sc", "hb-?sc|hb-c"), ("sickle thalassemia", "sickle-cell thalassemia|hbs-beta")),
    "eye turn": (
        ("inward", rf"esotropi\w*|esophori\w*|{_TURNS} in(?:wards?)?|cross-?eyed|crossed eyes?"),
        ("outward", rf"exotropi\w*|exophori\w*|{_TURNS} out(?:wards?)?|wall-?eyed"),
    ),
    "behaviour": (
        ("in situ", r"(?:carcinoma |melanoma )?in[- ]situ|dcis|lcis"),
        ("malignant", r"malignan\w*|cancers?|carcinomas?|adenocarcinomas?|sarcomas?|lymphomas?|leuka?emias?|melanomas?"
                      r"|metasta\w*|mets"),
        ("benign", r"benign|polyps?|polyposis"),
        ("uncertain", r"uncertain behaviou?r"),
    ),
    "first day": (
        ("within", rf"(?:within|in|during) (?:the )?(?:first )?{_DAY}|less than {_DAY}|immediate(?:ly)?"),
        ("after", rf"(?:more|greater|longer) than {_DAY}|(?:after|beyond) (?:the )?(?:first )?{_DAY}|{_DAY} or more|delayed"),
    ),
}  # fmt: skip
# A kind the index also files under another of its family: a subluxation under a dislocation where
# none is coded apart ("pathological subluxation of hip": M24.35- *Pathological dislocation*), a
# subacute course under the acute one ("subacute bronchitis": J20.9 *Acute bronchitis*).
_ALSO = {("injury", "subluxation"): ("injury", "dislocation"), ("course", "subacute"): ("course", "acute")}
_KIND_PATTERNS = [((family, kind), pattern) for family, kinds in _KINDS.items() for kind, pattern in kinds]
_KIND = re.compile(  # one pass over a text: the first alternative at a place wins ("partial dislocation")
    "|".join(rf"\b(?P<k{i}>{pattern})\b" for i, (_, pattern) in enumerate(_KIND_PATTERNS))
)
# An organism the query names against a name of an unspecified organism (J18.9 *Pneumonia,
# unspecified organism* for "pneumonia caused by Streptococcus pneumoniae"); not one it rules out.
_CAUSE = re.compile(
    r"\b(?:bacteri(?:a|al|um)|viral|virus|fung(?:al|us|i)|strep|streptococc\w*|staph|staphylococc\w*|pneumococc\w*"
    r"|e\.? ?coli|escherichia|pseudomonas|klebsiella|ha?emophilus|mycoplasma|chlamydi\w*|legionella|mrsa|mssa"
    r"|influenza|rsv|covid(?:-?19)?|aspergill\w*|candida\w*|enterococc\w*|gram[- ]?(?:negative|positive)|anaerob\w*)\b"
    r"(?!\s*(?:negative|neg\b|load))"
)
_UNSPECIFIED_ORGANISM = re.compile(r"\bunspecified organism\b")
# A fracture is traumatic unless said to be pathological (ICD-10-CM's default): a traumatic one's
# name states its encounter "for closed fracture" or "for open fracture", a pathological one's says so.
_PATHOLOGICAL_FRACTURE = r"\b(?:pathologic(?:al)?|stress|fatigue|insufficiency|fragility) (?:fractures?|fx)\b"
_OSTEOPOROTIC = r"\bosteoporo\w*"  # a fracture of a known osteoporosis is pathological (M80)
_PATHOLOGICAL = re.compile(f"{_PATHOLOGICAL_FRACTURE}|{_OSTEOPOROTIC}")
# Sepsis is coded only when said (an infection with an organism is no sepsis: "UTI 2/2 E. coli" is
# N39.0 with B96.20, not A41.51); a septic joint, bursa or embolus is no sepsis, and "urosepsis" has
# no code of its own (the provider is asked).
_SEPSIS = (
    r"\b(?:sepsis|septicemia|septicaemia|candidemia|candidaemia|septic(?!\s+(?:arthritis|bursitis|emboli\w*|tenosynovitis)))\b"
)
# What a name states that ICD-10-CM codes only when the query says so, and the words that say it:
# (what, the name's words, the query's). A drug named beside a condition is its treatment, not its
# adverse effect or a poisoning ("HTN on amlodipine" is I10, not T46.1X5A); a complication of a
# device only when a device is named ("UTI" is N39.0, not T83.511A); a fall (W00-W19) only when one
# is told ("out of breath climbing the stairs" is no W10); a fracture's delayed healing, nonunion or
# malunion only when said (a follow-up is routine healing, the 7th character D).
_CODED_WHEN_SAID = (
    ("sepsis", _SEPSIS, rf"{_SEPSIS}|\bblood poisoning\b"),
    (
        "pathological fracture",
        rf"{_PATHOLOGICAL_FRACTURE}|\bcollapsed vertebra|\batypical femoral fracture",
        rf"{_PATHOLOGICAL.pattern}|\b(?:path fx|atypical|collaps\w*|non-?traumatic|low[- ]trauma|metasta\w*|neoplas\w*|lytic)\b",
    ),
    (
        "drug effect",
        r"\b(?:adverse effect|underdosing|toxic effect) of\b|^poisoning by\b",
        r"\b(?:advers\w*|side[- ]?effects?|reactions?|toxic\w*|poison\w*|overdos\w*|underdos\w*|intoxicat\w*|induced|"
        r"ingest\w*|swallowed|allerg\w*|too (?:much|many)|accidental\w*|self[- ]harm|suicid\w*|exposures?|exposed|"
        r"inhal(?:ed|ing|ation)|bites?|bitten|stings?|stung|envenom\w*|missed|skipp\w*|ran out|non-?complian\w*|"
        r"non-?adheren\w*|not taking|stopped taking|caused by|due to|secondary to|from)\b",
    ),
    (
        "device complication",
        r"^(?:(?:(?:(?:other|unspecified|local|bloodstream) )?infection(?: and inflammatory reaction)?|embolism|fibrosis|"
        r"hemorrhage|pain|stenosis|thrombosis|perforation) due to|(?:breakdown|obstruction) \(mechanical\) of|(?:displacement|"
        r"leakage|protrusion|(?:other )?mechanical complication|(?:other specified|unspecified) complication|stenosis|"
        r"dislocation|instability|mechanical loosening|periprosthetic osteolysis|wear of articular bearing surface|erosion|"
        r"exposure) of|broken)"
        r"\b.*\b(?:catheter|device|implant|graft|prosthe\w*|stent|shunt|electrode|lead|pump|mesh)s?\b"
        r"|^capsular contracture of breast implant",
        r"\b(?:catheters?|cath|foley|picc|port|lines?|devices?|implants?|implanted|grafts?|prosthe\w*|stents?|shunts?|electrodes?|"
        r"(?:pacer|pacemaker|pacing|icd|lv|rv|ra) leads?|pumps?|pacemakers?|defibrillators?|aicd|valves?|mesh|hardware|fixation|"
        r"plates?|screws?|rods?|tubes?|drains?|replacements?|arthroplast\w*|tkr|thr|tka|tha|transplant\w*|"
        r"(?:av|arteriovenous|dialysis) fistula|dialysis|lvad|vad|ppm|icd|iud|filter|nail|wires?|pins?|cage|spacer|stimulator|"
        r"pessary|expander|iol|lens|cabg|bypass|peg|avf)\b",
    ),
    (
        "fall",
        r"^(?:other |unspecified )?fall\b|^other and unspecified fall\b|^slipping, tripping and stumbling without falling|"
        r"^jumping or diving",
        r"\b(?:falls?|fell|falling(?! asleep)|fallen|slip(?:s|ped|ping)?(?! (?:disc|disk|capital))|trip(?:s|ped|ping)?|"
        r"tumbl\w*|stumbl\w*|glf|ground[- ]level|found down|jump\w*|div(?:e|ed|ing))\b",
    ),
    (
        "delayed healing",
        r"\b(?:delayed healing|delayed union|nonunion|malunion)\b",
        r"\b(?:delayed (?:healing|union)|slow(?:ly)? (?:to )?heal\w*|not heal\w*|non-?heal\w*|poorly heal\w*|non-?union|"
        r"mal-?union|malunit\w*|ununited|malalign\w*|pseudo-?arthros\w*|failed to (?:heal|unite))\b",
    ),
)
_REQUIRES = [(what, re.compile(named)) for what, named, _ in _CODED_WHEN_SAID]
_LICENSES = [(what, re.compile(said)) for what, _, said in _CODED_WHEN_SAID]
_TRAUMATIC = re.compile(r"\b(?:closed|open) fracture\b")

# The columns detail agreement adds to the features (each 0 or 1).
DETAIL_FEATURES = (
    "side_agree",  # the query states a side and the name carries it
    "side_conflict",  # the query states a side and the name carries another, or "unspecified side", or
    # the other dominance than the query states
    "encounter_agree",  # the encounter the query states (else initial) is the name's
    "encounter_conflict",  # the name's encounter is another than the query states
    "number_agree",  # a number of the query (type, stage, grade, weeks) is in the name
    "number_conflict",  # the query and the name both state numbers and share none
    "with_conflict",  # the query says without and the name with, or the other way round; or one says
    # family history and the other a (personal) history, or the query a family history and the name
    # none, or the name only other kinds of a family of :data:`_KINDS` than the query (a joint's injury,
    # a course, a long bone's end or the bone), or the query one direction of a size, amount or rate
    # and the name only the other (:data:`_DIRECTIONS`), or the query an organism and the name
    # an unspecified organism, or the query a pathological fracture and the name a traumatic one: a
    # qualifier that turns the meaning over
    "default_conflict",  # the name states what ICD-10-CM codes only when said: an open or a nondisplaced
    # fracture (one not said to be open is coded closed, one not said to be nondisplaced displaced), a
    # history (a condition not said to be past is present), the dominance a side does not default to,
    # a code listed only beside another ("... classified elsewhere"), or what :data:`_CODED_WHEN_SAID`
    # codes only when said (a sepsis, a pathological fracture, a drug's effect, a device's
    # complication, a fall, a fracture's delayed healing) and the query does not say, or a side or a
    # severity grade the query does not state
    "billable",  # a code to record (a leaf)
)


@dataclass(frozen=True)
class Details:
    sides: frozenset[str]
    unspecified_side: bool
    encounter: str | None
    numbers: frozenset[str]
    without: bool
    with_: bool
    open_: bool  # an open (compound) fracture
    nondisplaced: bool
    history: str | None = None  # "family" or "personal" (a history not said to be the family's)
    dominance: str | None = None  # "dominant" or "nondominant" (the side a hemiplegia affects)
    elsewhere: bool = False  # a code only listed beside another ("... in diseases classified elsewhere")
    kinds: frozenset[tuple[str, str]] = frozenset()  # (family, kind) of :data:`_KINDS` named
    cause: bool = False  # names an organism
    unspecified_organism: bool = False
    pathological: bool = False  # says a fracture is not traumatic (osteoporotic, pathological, stress)
    requires: frozenset[str] = frozenset()  # what of :data:`_CODED_WHEN_SAID` it names
    licenses: frozenset[str] = frozenset()  # what of :data:`_CODED_WHEN_SAID` it says
    traumatic: bool = False  # a fracture's name with a traumatic fracture's encounter
    negated: frozenset[str] = frozenset()  # word stems (tokens) of the negated qualifiers
    stated: frozenset[str] = frozenset()  # those of the qualifiers stated ("with ...", ", ..."), not negated
    said: frozenset[str] = frozenset()  # those of the text that no negation covers
    severity: frozenset[str] = frozenset()  # the grades it states (:data:`_SEVERITY`), glosses left out
    sided: bool = False  # states a side (:data:`_NAMED_SIDE`) or, of a query, one side
    directions: frozenset[str] = frozenset()  # "up", "down": which way it says a size, amount or rate goes
    chromosomes: frozenset[str] = frozenset()  # the numbers of the chromosomes it names (:data:`_CHROMOSOME`)

    @classmethod
    def of(cls, text: str) -> Details:
        folded = fold(text)
        sides = frozenset("bilateral" if side == "both" else side for side in _SIDE.findall(folded))
        encounter = next((name for name, pattern in _ENCOUNTER if pattern.search(folded)), None)
        plain = _NOT_A_NEGATION.sub(" ", folded)
        spans = [" ".join(spans) for spans in _NEGATED.findall(plain)] + _NEGATED_AFTER.findall(plain)
        unnegated = _NEGATED.sub(";", _NEGATED_AFTER.sub(";", plain))
        said = frozenset(tokens(unnegated))
        # A word the text also says outside a negation is not negated ("Unspecified ectopic pregnancy
        # without intrauterine pregnancy" negates no pregnancy).
        negated = frozenset(tokens(" ".join(spans))) - _JOINING - said
        return cls(
            sides,
            bool(_UNSPECIFIED_SIDE.search(folded)),
            encounter,
            frozenset(_NUMBER.findall(_CHROMOSOME.sub(" ", measures.strip(folded)))) | _ranged(folded) | _grades(folded)
            | ({"5"} if _STAGE_5.search(folded) else set()),
            bool(_WITHOUT.search(folded)),
            bool(_WITH.search(folded)),
            bool(_OPEN.search(folded)),
            bool(_NONDISPLACED.search(folded)),
            _history(unnegated),  # "no family history" states none
            _dominance(folded),
            bool(_ELSEWHERE.search(folded)),
            frozenset(_KIND_PATTERNS[int(match.lastgroup[1:])][0] for match in _KIND.finditer(unnegated) if match.lastgroup),
            bool(_CAUSE.search(unnegated)),
            bool(_UNSPECIFIED_ORGANISM.search(folded)),
            bool(_PATHOLOGICAL.search(unnegated)),
            frozenset(what for what, pattern in _REQUIRES if pattern.search(unnegated)),
            frozenset(what for what, pattern in _LICENSES if pattern.search(unnegated)),
            bool(_TRAUMATIC.search(folded)),
            negated,
            frozenset(tokens(" ".join(_QUALIFIER.findall(unnegated)))),
            said,
            _grades(_NAMED_GRADE.sub(" ", _GLOSS.sub(" ", folded))),
            bool(_NAMED_SIDE.search(folded) or _ONE_SIDE.search(folded)),
            frozenset(_DIRECTION_OF[match.lastgroup] for match in _DIRECTION.finditer(unnegated) if match.lastgroup),
            frozenset(_CHROMOSOME.findall(folded)),
        )


def _grades(text: str) -> frozenset[str]:
    """The severity grades ``text`` states, "mod" as moderate."""
    return frozenset(_SEVERITIES.get(grade, grade) for grade in _SEVERITY.findall(text))


def _ranged(text: str) -> frozenset[str]:
    """The numbers inside the ranges ``text`` states ("stage 1 through stage 4": 1 to 4)."""
    return frozenset(str(n) for low, high in _RANGE.findall(text) for n in range(int(low), int(high) + 1))


def _history(text: str) -> str | None:
    return "family" if _FAMILY.search(text) else "personal" if _HISTORY.search(text) else None


def _another_kind(said: frozenset[tuple[str, str]], named: frozenset[tuple[str, str]]) -> bool:
    """Whether, in a family both name, the name names none of the kinds the query says."""
    families = {family for family, _ in said} & {family for family, _ in named}
    meant = said | {_ALSO[kind] for kind in said if kind in _ALSO}
    return any(not {k for f, k in meant if f == family} & {k for f, k in named if f == family} for family in families)


def _dominance(text: str) -> str | None:
    found = _DOMINANCE.search(text)
    return None if found is None else "nondominant" if found.group(1) else "dominant"


def agreement(query: Details, name: Details, billable: bool | None) -> tuple[float, ...]:
    """The :data:`DETAIL_FEATURES` of a concept's name for a query."""
    side_agree = bool(query.sides & name.sides)
    stated_dominance = query.dominance is not None and name.dominance is not None and query.dominance != name.dominance
    side_conflict = (bool(query.sides) and not side_agree and (bool(name.sides) or name.unspecified_side)) or stated_dominance
    default_dominance = next(
        (_DEFAULT_DOMINANCE[side] for side in sorted(name.sides & query.sides) if side in _DEFAULT_DOMINANCE), None
    )
    stated = query.encounter or "initial"  # a coder's default for an injury
    encounter_agree = name.encounter is not None and name.encounter == stated
    encounter_conflict = name.encounter is not None and name.encounter != stated
    number_agree = bool(query.numbers & name.numbers)
    number_conflict = (bool(query.numbers) and bool(name.numbers) and not number_agree) or bool(
        query.chromosomes and name.chromosomes and not query.chromosomes & name.chromosomes
    )
    with_conflict = (
        (query.without and name.with_ and not name.without)
        # "with" said against a name only of "without" ("T2DM with neuropathy": not E11.9 "... without
        # complications"); a name stating its own "with" too says what else is not there (E10.10
        # "... with ketoacidosis without coma" for "T1DM with DKA")
        or (query.with_ and not query.without and not query.negated and name.without and not name.with_)
        or bool(query.negated & name.stated)  # "no coma" against "... with coma"
        or bool(query.said & name.negated)  # "migraine with aura" against "Migraine without aura"
        or (query.history is not None and name.history is not None and query.history != name.history)
        or (query.history == "family" and name.history != "family")  # a relative's condition is not the patient's
        or (query.cause and name.unspecified_organism)
        or (query.pathological and name.traumatic)
        or _another_kind(query.kinds, name.kinds)
        or (len(query.directions) == 1 and bool(name.directions) and not query.directions & name.directions)
    )
    default_conflict = (
        (name.open_ and not query.open_)
        or (name.nondisplaced and not query.nondisplaced)
        or (name.history is not None and query.history is None)
        or (query.dominance is None and name.dominance is not None and default_dominance not in (None, name.dominance))
        or (name.elsewhere and not query.elsewhere)
        or bool(name.requires - query.licenses)
        or (name.sided and not (query.sided or query.sides))
        or (bool(name.severity) and not query.severity)
    )
    return tuple(
        float(v)
        for v in (
            side_agree,
            side_conflict,
            encounter_agree,
            encounter_conflict,
            number_agree,
            number_conflict,
            with_conflict,
            default_conflict,
            bool(billable),
        )
    )
