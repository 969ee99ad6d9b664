"""The clinical query grammar: each rule, what it reads, and what it says it read (a row's ``why``)."""

from __future__ import annotations

import pytest

from app.search import grammar

ICD = frozenset({"icd10cm", "hpo"})
HPO = frozenset({"hpo"})


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("first symptoms around age 10", "juvenile onset"),
        ("symptoms began after the age of 60", "late onset"),
        ("onset at age 45", "middle age onset"),
        ("presented at age 3", "childhood onset"),
        ("onset between ages 5 and 15", "juvenile onset"),  # a range: its middle
        ("seizures started at 2 years", "seizures childhood onset"),
        ("symptoms began at 6 months of age", "infantile onset"),
        ("onset at 18 months", "childhood onset"),
        ("symptoms started at 3 days old", "neonatal onset"),
        ("presents within the first four weeks after birth", "neonatal onset"),
        ("onset in the first year of life", "infantile onset"),
        ("he is 10 years old", "10 years old"),  # an age, no onset
    ],
)
def test_the_age_a_disease_began_at_is_hpos_onset_term(query: str, text: str) -> None:
    assert grammar.read(query, HPO).text == text


def test_an_onset_age_is_read_only_where_hpo_is_searched() -> None:
    assert grammar.read("first symptoms around age 10", frozenset({"icd10cm"})).text == "first symptoms around age 10"


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("seen in 80 to 99 percent of patients", "very frequent"),  # a range: its middle
        ("feature seen in roughly a third of reported patients", "feature frequent"),
        ("seen in about 10% of affected individuals", "occasional"),
        ("rare feature, under 5% of cases", "rare feature, very rare"),  # under 5%: below Occasional's 5%
        ("in over 99% of cases", "in very frequent"),  # Obligate is 100%
        ("seen in every single affected individual", "obligate"),
        ("occurs in 1 in 20 patients", "occasional"),
        ("present in 0% of cases", "excluded"),
        # no share of patients: a saturation, an ejection fraction, a count
        ("SpO2 88%", "hypoxemia"),
        ("LVEF 55%", "LVEF 55%"),
        ("seen in 5 patients", "seen in 5 patients"),
    ],
)
def test_the_share_of_patients_a_feature_is_seen_in_is_hpos_frequency_term(query: str, text: str) -> None:
    assert grammar.read(query, HPO).text == text


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("only mildly affected", "mild"),
        ("severely affected", "severe"),
        ("intermediate severity, between mild and severe", "moderate"),
        ("mildly affected sibling", "mildly affected sibling"),  # not the whole query: a family member
        ("mild hearing loss", "mild hearing loss"),  # a finding's grade, searched with it
    ],
)
def test_a_degree_said_alone_is_hpos_severity_term(query: str, text: str) -> None:
    assert grammar.read(query, HPO).text == text


def test_a_frequency_is_read_only_where_hpo_is_searched() -> None:
    assert grammar.read("seen in about half of patients", frozenset({"icd10cm"})).text == "seen in about half of patients"


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("Cholecystitis, acute, with calculus", "acute Cholecystitis with calculus"),
        ("pain, left knee", "left knee pain"),
        ("appendicitis, acute, perforated, no abscess", "acute perforated appendicitis no abscess"),
        # a list, a sentence, an abbreviation or a history is no index entry
        ("fever, cough and chills", "fever, cough and chills"),
        ("thrush down below, itchy with a thick white discharge", "thrush down below, itchy with a thick white discharge"),
        ("CAP, infiltrate", "CAP, infiltrate"),
        ("history, family, colon cancer", "history, family, colon cancer"),
    ],
)
def test_a_coders_index_order_is_read_with_the_modifiers_first(query: str, text: str) -> None:
    assert grammar.read(query, HPO).text == text


@pytest.mark.parametrize(
    ("query", "text", "said"),
    [
        ("DM2 w/o complications", "DM2 without complications", ["'w/o' as 'without'"]),
        ("PNA w/hypoxia", "PNA with hypoxia", ["'w/' as 'with'"]),
        ("cirrhosis c/b ascites", "cirrhosis complicated by ascites", ["'c/b' as 'complicated by'"]),
        ("AKI 2/2 dehydration", "AKI due to dehydration", ["'2/2' as 'due to'"]),
        ("pneumonia caused by S. pneumoniae", "pneumonia due to S. pneumoniae", ["'caused by' as 'due to'"]),
        ("r/o appendicitis", "suspected appendicitis", ["'r/o' as 'suspected'"]),
        ("fx of wrist", "fracture of wrist", ["'fx' as 'fracture'"]),
        ("scalp lac", "scalp laceration", ["'lac' as 'laceration'"]),
        ("b/l knee pain", "bilateral knee pain", ["'b/l' as 'bilateral'"]),
        ("lt ankle sprain", "left ankle sprain", ["'lt' as 'left'"]),
        ("rt shoulder pain", "right shoulder pain", ["'rt' as 'right'"]),
        ("pt c/o chest pain", "chest pain", ["'pt' left out", "'c/o' left out"]),
        ("COPD exac", "COPD exacerbation", ["'exac' as 'exacerbation'"]),
        ("sz d/o", "sz disorder", ["'d/o' as 'disorder'"]),
        ("appy c/b perf", "appy complicated by perforation", ["'c/b' as 'complicated by'", "'perf' as 'perforation'"]),
        ("wrist sprain, first visit", "wrist sprain, initial encounter", ["'first visit' as 'initial encounter'"]),
    ],
)
def test_shorthand(query: str, text: str, said: list[str]) -> None:
    assert grammar.read(query, HPO) == grammar.Reading(text, said)


@pytest.mark.parametrize(
    ("query", "text", "said"),
    [
        ("R hip OA", "right hip OA", ["'R' as 'right'"]),
        ("knee effusion (L)", "knee effusion left", ["'(L)' as 'left'"]),
        ("POAG OU", "POAG bilateral eyes", ["'OU' as 'bilateral eyes'"]),
        ("CRVO OD", "CRVO right eye", ["'OD' as 'right eye'"]),
        ("cataract OS", "cataract left eye", ["'OS' as 'left eye'"]),
        ("SNHL AU", "SNHL bilateral ears", ["'AU' as 'bilateral ears'"]),
        ("cerumen impaction AS", "cerumen impaction left ear", ["'AS' as 'left ear'"]),
        ("otitis media AD", "otitis media right ear", ["'AD' as 'right ear'"]),
        ("AS murmur", "AS murmur", []),  # aortic stenosis: no ear, no side
        ("DVT LLE", "DVT left lower extremity", ["'LLE' as 'left lower extremity'"]),
        ("cellulitis BLE", "cellulitis bilateral lower extremity", ["'BLE' as 'bilateral lower extremity'"]),
        ("RUE weakness", "right upper extremity weakness", ["'RUE' as 'right upper extremity'"]),
        ("NSCLC RUL", "NSCLC right upper lobe", ["'RUL' as 'right upper lobe'"]),
        ("PNA RML", "PNA right middle lobe", ["'RML' as 'right middle lobe'"]),
        ("gout R 1st MTP", "gout right 1st MTP", ["'R' as 'right'"]),  # before an ordinal
        ("r hip pain", "r hip pain", []),  # a lower-case letter is no side
        ("Vitamin D deficiency", "Vitamin D deficiency", []),
    ],
)
def test_sides(query: str, text: str, said: list[str]) -> None:
    assert grammar.read(query, HPO) == grammar.Reading(text, said)


@pytest.mark.parametrize(
    ("query", "text", "said"),
    [
        ("colon ca", "colon cancer", ["'colon ca' as 'colon cancer'"]),
        ("ca of the prostate", "cancer of prostate", ["'ca of the prostate' as 'cancer of prostate'"]),
        ("low ca", "low ca", []),  # calcium, not a cancer: no organ
        ("COPD w/ AE", "COPD with acute exacerbation", ["'w/' as 'with'", "'AE' as 'acute exacerbation'"]),
        ("AE after vaccine", "AE after vaccine", []),  # an adverse event: no airway disease
        ("DM2 poorly controlled", "DM2 with hyperglycemia", ["'poorly controlled' as 'with hyperglycemia'"]),
        ("uncontrolled hypertension", "uncontrolled hypertension", []),  # no diabetes
        ("DVT 2019", "DVT", ["'2019' left out"]),
        ("CABG in 3/2015", "CABG", ["'in 3/2015' left out"]),
        ("gout (2021)", "gout", ["'(2021)' left out"]),
        ("L popliteal DVT dx 10/14", "left popliteal DVT", ["'L' as 'left'", "'dx 10/14' left out"]),  # a day and month
        ("afib since 3/4", "afib", ["'since 3/4' left out"]),
        ("MRC 4/5 hip flexion", "MRC 4/5 hip flexion", []),  # a score, no date
        ("2019", "2019", []),  # a date alone is the query
        ("HP:0002019", "HP:0002019", []),
    ],
)
def test_sites_courses_and_dates(query: str, text: str, said: list[str]) -> None:
    assert grammar.read(query, HPO) == grammar.Reading(text, said)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("stage IV breast cancer", "stage 4 breast cancer"),
        ("type II diabetes", "type 2 diabetes"),
        ("obesity cl II", "obesity class 2"),  # a note's "cl" and "gr" are class and grade
        ("gr III haemorrhoids", "grade 3 haemorrhoids"),
        ("CKD IIIb", "CKD stage 3b"),
        ("ckd3a", "ckd stage 3a"),
        ("CKD stage 5 on maintenance haemodialysis", "end stage renal disease on maintenance haemodialysis"),  # N18.6
        ("CKD 5", "CKD stage 5"),  # no dialysis said: N18.5
        ("C5-6 radiculopathy", "cervical C5-C6 radiculopathy"),
        ("L4-5 disc herniation", "lumbar L4-L5 disc herniation"),
        ("L5-S1 stenosis", "lumbosacral L5-S1 stenosis"),
        ("T12 compression fracture", "thoracic T12 compression fracture"),
        ("low T3", "low T3"),  # a level only next to a spine word
        ("pre-eclampsia at 34 wks", "pre-eclampsia 34 weeks gestation third trimester"),
        ("pregnant 10 weeks with vomiting", "pregnant 10 weeks gestation first trimester with vomiting"),
        ("6 weeks of cough", "6 weeks of cough"),  # weeks read as gestation only in an obstetric query
        ("GDM 2nd tri", "GDM second trimester"),
        # a query that only dates the pregnancy is its weeks of gestation (Z3A), without a trimester
        ("IUP at 28 wks", "28 weeks gestation of pregnancy"),
        ("pregnant, 12 weeks", "12 weeks gestation of pregnancy"),
        ("IUP at 5 wks", "IUP 5 weeks gestation first trimester"),  # before Z3A.08: the trimester rule
    ],
)
def test_numbers_levels_and_pregnancy(query: str, text: str) -> None:
    assert grammar.read(query, HPO).text == text


@pytest.mark.parametrize(
    ("query", "text", "last"),
    [
        (
            "s/p appendectomy",
            "acquired absence of other specified parts of digestive tract",
            "'status post appendectomy' as 'acquired absence of other specified parts of digestive tract'",
        ),
        (
            "s/p lap appy",
            "acquired absence of other specified parts of digestive tract",
            "'status post lap appy' as 'acquired absence of other specified parts of digestive tract'",
        ),
        (
            "hx of colon polyps",
            "personal history of colon polyps",
            "'history of colon polyps' as 'personal history of colon polyps'",
        ),
        ("FHx of breast cancer", "family history of breast cancer", "'FHx of' as 'family history of'"),
        (
            "R great toe amputation",
            "acquired absence of right great toe",
            "'right great toe amputation' as 'acquired absence of right great toe'",
        ),
        ("on home O2", "dependence on supplemental oxygen", "'on home O2' as 'dependence on supplemental oxygen'"),
        ("on hemodialysis", "dependence on renal dialysis", "'on hemodialysis' as 'dependence on renal dialysis'"),
        (
            "on chronic anticoagulation",
            "long term (current) use of anticoagulants",
            "'on chronic anticoagulation' as 'long term (current) use of anticoagulants'",
        ),
        (
            "takes metformin",
            "long term (current) use of oral hypoglycemic drugs",
            "'takes metformin' as 'long term (current) use of oral hypoglycemic drugs'",
        ),
        (
            "s/p L TKA",
            "presence of left artificial knee joint",
            "'status post left TKA' as 'presence of left artificial knee joint'",
        ),
        ("s/p kidney transplant", "kidney transplant status", "'status post kidney transplant' as 'kidney transplant status'"),
        (
            "s/p R mastectomy",
            "acquired absence of right breast and nipple",
            "'status post right mastectomy' as 'acquired absence of right breast and nipple'",
        ),
        ("s/p MI", "old myocardial infarction", "'status post MI' as 'old myocardial infarction'"),  # I25.2
        ("hx of heart attack 2019", "old myocardial infarction", "'history of heart attack' as 'old myocardial infarction'"),
        ("FHx of MI", "family history of MI", "'FHx of' as 'family history of'"),  # a relative's: no old MI
        (
            "takes eliquis lifelong",
            "long term (current) use of anticoagulants",
            "'takes eliquis lifelong' as 'long term (current) use of anticoagulants'",
        ),
        (
            "h/o STEMI, stented",
            "old myocardial infarction",
            "'history of STEMI, stented' as 'old myocardial infarction'",
        ),  # the finding's first clause names it
        ("ex smoker", "personal history of nicotine dependence", "'ex smoker' as 'personal history of nicotine dependence'"),
        (
            "on tacrolimus",
            "long term (current) use of calcineurin inhibitor",
            "'on tacrolimus' as 'long term (current) use of calcineurin inhibitor'",
        ),
    ],
)
def test_history_and_status_where_the_terminology_codes_them(query: str, text: str, last: str) -> None:
    reading = grammar.read(query, ICD)
    assert (reading.text, reading.said[-1]) == (text, last)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        # a condition and the drug that treats it: the condition, coded first
        ("atrial fibrillation on apixaban", "atrial fibrillation"),
        ("hypertension on lisinopril 20 mg daily", "hypertension"),
        ("depression taking fluoxetine", "depression"),
        ("hypothyroidism on levothyroxine", "hypothyroidism"),
        # a drug that may have caused the condition, or whose control its code states: kept
        ("hypothyroidism on lithium", "hypothyroidism on lithium"),
        ("gout on furosemide", "gout on furosemide"),
        ("tardive dyskinesia on haloperidol", "tardive dyskinesia on haloperidol"),
        ("gestational diabetes on insulin", "gestational diabetes on insulin"),
        # not a drug
        ("anemia on iron", "anemia on iron"),
        ("pain on walking", "pain on walking"),
    ],
)
def test_a_condition_treated_with_a_drug_is_read_alone(query: str, text: str) -> None:
    assert grammar.read(query, ICD).text == text


@pytest.mark.parametrize(
    ("query", "text", "last"),
    [
        ("hx of seizures", "seizures", "'history of' left out"),
        ("s/p cleft lip repair", "cleft lip repair", "'status post' left out"),
        ("on home O2", "on home O2", None),
    ],
)
def test_history_and_status_leave_the_finding_where_none_codes_them(query: str, text: str, last: str | None) -> None:
    reading = grammar.read(query, HPO)
    assert (reading.text, reading.said[-1] if reading.said else None) == (text, last)


def test_abbreviations_are_written_out_before_the_status_rules_read() -> None:
    def expand(reading: grammar.Reading) -> None:
        reading.text = reading.text.replace("BKA", "below knee amputation")
        reading.said.append("'BKA' as 'below knee amputation'")

    reading = grammar.read("s/p L BKA", ICD, expand)
    assert reading.text == "acquired absence of left below knee"
    assert reading.said[:3] == ["'s/p' as 'status post'", "'L' as 'left'", "'BKA' as 'below knee amputation'"]


@pytest.mark.parametrize(
    ("query", "text", "said"),
    [
        ("Gallstone (disorder)", "Gallstone", ["'(disorder)' left out"]),
        ("Pigmentary retinopathy (finding)", "Pigmentary retinopathy", ["'(finding)' left out"]),
        ("Down syndrome (trisomy 21)", "Down syndrome (trisomy 21)", []),  # no semantic tag
        ("pulled hamstring", "strain of hamstring", ["'pulled' as 'strain of'"]),
        ("I twisted my ankle", "sprain of ankle", ["'I' left out", "'twisted my' as 'sprain of'"]),
    ],
)
def test_other_vocabularies_tags_and_injuries_as_people_say_them(query: str, text: str, said: list[str]) -> None:
    assert grammar.read(query, HPO) == grammar.Reading(text, said)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("metastatic cancer to bone", "secondary malignant neoplasm of bone"),
        ("breast ca metastatic to the spine", "secondary malignant neoplasm of bone"),
        ("liver mets", "secondary malignant neoplasm of liver"),
        ("mets to the lungs", "secondary malignant neoplasm of lung"),
        ("metastatic breast cancer", "metastatic breast cancer"),  # a primary with spread: no site reached
    ],
)
def test_metastases_read_as_the_site_they_reached_where_icd10cm_codes_them(query: str, text: str) -> None:
    assert grammar.read(query, ICD).text == text
    assert not grammar.read(query, HPO).text.startswith("secondary malignant neoplasm")  # HPO codes no site reached


def test_a_query_the_grammar_does_not_touch_says_nothing() -> None:
    assert grammar.read("short stature since birth", ICD) == grammar.Reading("short stature since birth", [])


@pytest.mark.parametrize(
    ("query", "text", "said"),
    [
        (
            "bilat epicanthic folds, no telecanthus",
            "bilateral epicanthic folds",
            ["'bilat' as 'bilateral'", "'no telecanthus' left out"],
        ),
        ("sporadic case; no family history", "sporadic case", ["'no family history' left out"]),
        ("no eyebrows", "no eyebrows", []),  # the finding itself: an absence
    ],
)
def test_a_finding_ruled_out_after_what_is_stated_is_left_out_where_none_codes_without(
    query: str, text: str, said: list[str]
) -> None:
    assert grammar.read(query, HPO) == grammar.Reading(text, said)
    assert grammar.read(query, ICD).text == query.replace("bilat", "bilateral")  # ICD-10-CM reads it as "without"
