"""Detail agreement between what a query states and what a concept's name carries."""

from __future__ import annotations

import pytest

from app.search.details import DETAIL_FEATURES, Details, agreement

FEMUR = "Fracture of unspecified part of neck of right femur"


def _features(query: str, name: str, billable: bool | None = True) -> dict[str, float]:
    return dict(zip(DETAIL_FEATURES, agreement(Details.of(query), Details.of(name), billable), strict=True))


@pytest.mark.parametrize(
    ("query", "name", "agree", "conflict"),
    [
        ("left knee osteoarthritis", "Unilateral primary osteoarthritis, left knee", 1.0, 0.0),
        ("left knee osteoarthritis", "Unilateral primary osteoarthritis, right knee", 0.0, 1.0),
        ("DVT of left leg", "Acute embolism and thrombosis of unspecified deep veins of unspecified lower extremity", 0.0, 0.0),
        ("BPPV right ear", "Benign paroxysmal vertigo, unspecified ear", 0.0, 1.0),
        ("hearing loss both ears", "Sensorineural hearing loss, bilateral", 1.0, 0.0),
        ("knee pain", "Pain in right knee", 0.0, 0.0),  # no side stated: none agrees, none conflicts
    ],
)
def test_sides(query: str, name: str, agree: float, conflict: float) -> None:
    found = _features(query, name)
    assert (found["side_agree"], found["side_conflict"]) == (agree, conflict)


@pytest.mark.parametrize(
    ("query", "name", "agree", "conflict"),
    [
        ("right femoral neck fracture, initial encounter", f"{FEMUR}, initial encounter for closed fracture", 1.0, 0.0),
        ("right femoral neck fracture", f"{FEMUR}, initial encounter for closed fracture", 1.0, 0.0),  # initial unless said
        ("right femoral neck fracture", f"{FEMUR}, sequela", 0.0, 1.0),
        (
            "right femoral neck fracture follow-up",
            f"{FEMUR}, subsequent encounter for closed fracture with routine healing",
            1.0,
            0.0,
        ),
        ("right femoral neck fracture, sequela", f"{FEMUR}, initial encounter for closed fracture", 0.0, 1.0),
        ("asthma", "Mild intermittent asthma, uncomplicated", 0.0, 0.0),  # no encounter in the name
    ],
)
def test_encounters(query: str, name: str, agree: float, conflict: float) -> None:
    found = _features(query, name)
    assert (found["encounter_agree"], found["encounter_conflict"]) == (agree, conflict)


def test_numbers_as_type_stage_and_weeks() -> None:
    assert _features("CKD stage 3b", "Chronic kidney disease, stage 3b")["number_agree"] == 1.0
    assert _features("CKD stage 3b", "Chronic kidney disease, stage 4 (severe)")["number_conflict"] == 1.0
    assert _features("type 2 diabetes", "Type 1 diabetes mellitus without complications")["number_conflict"] == 1.0
    assert _features("diabetes", "Type 1 diabetes mellitus without complications")["number_conflict"] == 0.0
    # a range the name states holds each number in it
    ranged = "Hypertensive heart and chronic kidney disease with heart failure and stage 1 through stage 4 chronic kidney disease"
    assert _features("hypertensive heart and kidney disease with heart failure, CKD stage 3", ranged)["number_agree"] == 1.0
    assert _features("hypertensive heart and kidney disease with heart failure, CKD stage 5", ranged)["number_conflict"] == 1.0
    # an end stage renal disease is a chronic kidney disease of stage 5
    assert _features("CKD stage 5 on dialysis", "End stage renal disease")["number_agree"] == 1.0
    assert _features("ESRD", "Chronic kidney disease, stage 4 (severe)")["number_conflict"] == 1.0
    # a chromosome's number names what is meant: no agreement, but two differing conflict
    assert _features("trisomy 21", "Trisomy 21, translocation")["number_agree"] == 0.0
    assert _features("trisomy 13", "Trisomy 18, unspecified")["number_conflict"] == 1.0


def test_with_and_without() -> None:
    assert _features("migraine without aura", "Migraine with aura, not intractable")["with_conflict"] == 1.0
    assert _features("migraine with aura", "Migraine without aura, not intractable")["with_conflict"] == 1.0
    assert _features("migraine without aura", "Migraine without aura, not intractable")["with_conflict"] == 0.0


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        # a qualifier the query negates ("no", "not", "with no") against one the name states
        ("type 1 diabetic in DKA, not in a coma", "Type 1 diabetes mellitus with ketoacidosis with coma", 1.0),
        ("type 1 diabetic in DKA, not in a coma", "Type 1 diabetes mellitus with ketoacidosis without coma", 0.0),
        (
            "recurrent depression, severe, no psychotic features",
            "Major depressive disorder, recurrent, severe with psychotic symptoms",
            1.0,
        ),
        ("concussion with no loss of consciousness", "Concussion with loss of consciousness of 30 minutes or less", 1.0),
        ("concussion with no loss of consciousness", "Concussion without loss of consciousness", 0.0),
        (
            "appendicitis, not perforated and no gangrene",
            "Acute appendicitis with perforation, localized peritonitis, and gangrene, without abscess",
            1.0,
        ),
        ("migraine, aura, not intractable", "Migraine with aura, intractable, without status migrainosus", 1.0),
        ("migraine, aura, not intractable", "Migraine with aura, not intractable, without status migrainosus", 0.0),
        # a qualifier the query states against one the name negates
        ("GERD with esophagitis, not bleeding", "Gastro-esophageal reflux disease without esophagitis", 1.0),
        ("GERD with esophagitis, not bleeding", "Gastro-esophageal reflux disease with esophagitis, without bleeding", 0.0),
        ("concussion with loss of consciousness", "Concussion without loss of consciousness", 1.0),
        # "with" said against a name only of "without"; one stating its own "with" says what else is not there
        ("type 2 diabetes with neuropathy", "Type 2 diabetes mellitus without complications", 1.0),
        ("T1DM with DKA", "Type 1 diabetes mellitus with ketoacidosis without coma", 0.0),
        ("acute cholecystitis with gallstones", "Calculus of gallbladder with acute cholecystitis without obstruction", 0.0),
        # a negation written after its words
        ("laceration, nail not involved", "Laceration without foreign body of finger with damage to nail", 1.0),
        ("laceration, nail not involved", "Laceration with foreign body of finger without damage to nail", 0.0),
        # a negation ends at "of": the site after it is no qualifier ("of left index finger")
        (
            "laceration of left index finger, nail not involved",
            "Laceration without foreign body of left index finger without damage to nail",
            0.0,
        ),
        ("laceration of left index finger, nail not involved", "Laceration of left index finger with damage to nail", 1.0),
        # an older code system's "without mention of" negates what follows it
        ("Type II diabetes without mention of complication", "Type 2 diabetes mellitus without complications", 0.0),
        ("Type II diabetes without mention of complication", "Type 2 diabetes mellitus with unspecified complications", 1.0),
        # a negation that only says what the name does not state is no conflict
        ("baby not gaining weight", "Poor weight gain", 0.0),
        ("cleft lip", "Non-midline cleft lip", 0.0),  # "non" negates "midline" only
        ("neither coma nor ketoacidosis", "Type 1 diabetes mellitus without ketoacidosis, without coma", 0.0),
        # a default the query negates beside a qualifier it states agrees with the name negating it
        (
            "migraine with aura, without status migrainosus",
            "Migraine with aura, not intractable, without status migrainosus",
            0.0,
        ),
        # phrases that only look like a negation
        ("vaccine refused by caregiver", "Immunization not carried out because of caregiver refusal", 0.0),
        ("cocaine in blood", "Finding of cocaine in blood", 0.0),
        ("cocaine in blood", "Findings of drugs and other substances, not normally found in blood", 0.0),
    ],
)
def test_a_negated_qualifier_against_a_stated_one_turns_the_meaning_over(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


def test_open_and_nondisplaced_only_when_said() -> None:
    assert (
        _features("femoral neck fracture", f"{FEMUR}, initial encounter for open fracture type I or II")["default_conflict"]
        == 1.0
    )
    assert (
        _features("open femoral neck fracture", f"{FEMUR}, initial encounter for open fracture type I or II")["default_conflict"]
        == 0.0
    )
    assert _features("clavicle fracture", "Nondisplaced fracture of shaft of right clavicle")["default_conflict"] == 1.0
    assert (
        _features("nondisplaced clavicle fracture", "Nondisplaced fracture of shaft of right clavicle")["default_conflict"] == 0.0
    )


def test_billable() -> None:
    assert _features("x", "y", True)["billable"] == 1.0
    assert _features("x", "y", None)["billable"] == 0.0


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("personal history of stroke", "Family history of stroke", 1.0),
        ("hx of stroke", "Family history of stroke", 1.0),
        ("family history of breast cancer", "Personal history of malignant neoplasm of breast", 1.0),
        ("FHx of colon cancer", "Family history of malignant neoplasm of digestive organs", 0.0),
        ("h/o DVT", "Personal history of other venous thrombosis and embolism", 0.0),
        ("stroke", "Family history of stroke", 0.0),  # no history stated: no conflict
    ],
)
def test_family_history_against_a_personal_one_turns_the_meaning_over(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("I've got a kidney stone", "Personal history of urinary calculi", 1.0),  # present unless said past
        ("I've had kidney stones", "Personal history of urinary calculi", 0.0),
        ("treated for leukemia as a child", "Personal history of leukemia", 0.0),
        ("former smoker", "Personal history of nicotine dependence", 0.0),
        ("colon cancer", "Family history of malignant neoplasm of digestive organs", 1.0),
        ("kidney stone", "Calculus of kidney", 0.0),
    ],
)
def test_a_history_is_coded_only_when_said(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["default_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("history, family, colon cancer", "Malignant neoplasm of colon, unspecified", 1.0),  # a coder's inverted form
        ("family history of colon cancer", "Family history of malignant neoplasm of digestive organs", 0.0),
        ("sporadic case, no family history", "Sporadic", 0.0),  # a negated family history states none
    ],
)
def test_a_relatives_condition_is_not_the_patients(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


RIGHT_DOMINANT = "Hemiplegia and hemiparesis following cerebral infarction affecting right dominant side"
RIGHT_NONDOMINANT = "Hemiplegia and hemiparesis following cerebral infarction affecting right non-dominant side"
LEFT_DOMINANT = "Hemiplegia and hemiparesis following cerebral infarction affecting left dominant side"


@pytest.mark.parametrize(
    ("query", "name", "default", "side"),
    [
        ("old CVA with residual right hemiparesis", RIGHT_DOMINANT, 0.0, 0.0),  # the right side defaults to dominant
        ("old CVA with residual right hemiparesis", RIGHT_NONDOMINANT, 1.0, 0.0),
        ("left hemiparesis after stroke", LEFT_DOMINANT, 1.0, 0.0),  # the left to non-dominant
        ("right nondominant hemiparesis after stroke", RIGHT_DOMINANT, 0.0, 1.0),  # said: another conflicts
        ("right non-dominant hemiparesis after stroke", RIGHT_NONDOMINANT, 0.0, 0.0),
    ],
)
def test_dominance_said_or_by_icd10cm_default(query: str, name: str, default: float, side: float) -> None:
    found = _features(query, name)
    assert (found["default_conflict"], found["side_conflict"]) == (default, side)


@pytest.mark.parametrize(
    ("query", "name", "agree", "conflict"),
    [
        (
            "bipolar I, currently manic, severe, no psychosis",
            "Bipolar disorder, current episode manic without psychotic features, severe",
            1.0,
            0.0,
        ),
        ("mild hyperemesis gravidarum", "Hyperemesis gravidarum with metabolic disturbance", 0.0, 0.0),
        ("moderate persistent asthma", "Severe persistent asthma, uncomplicated", 0.0, 1.0),
    ],
)
def test_severity_is_compared_as_a_grade(query: str, name: str, agree: float, conflict: float) -> None:
    found = _features(query, name)
    assert (found["number_agree"], found["number_conflict"]) == (agree, conflict)


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("pyelonephritis", "Renal tubulo-interstitial disorders in diseases classified elsewhere", 1.0),  # code first the disease
        ("UTI due to E. coli", "Unspecified Escherichia coli [E. coli] as the cause of diseases classified elsewhere", 1.0),
        ("arthropathy in diseases classified elsewhere", "Arthropathy in diseases classified elsewhere", 0.0),  # said
        ("fibrosis of lung", "Other interstitial pulmonary diseases with fibrosis, not elsewhere classified", 0.0),  # NEC
    ],
)
def test_a_code_listed_only_beside_another_is_never_named_first(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["default_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("dislocated right elbow", "Subluxation of right radial head, initial encounter", 1.0),
        ("dislocated left knee", "Unspecified subluxation of left knee, initial encounter", 1.0),
        # the index files a subluxation under a dislocation where none is coded apart (M24.35-)
        ("pathological subluxation of the right hip", "Pathological dislocation of right hip, not elsewhere classified", 0.0),
        ("subluxed left patella", "Lateral subluxation of left patella, initial encounter", 0.0),
        ("dislocation of jaw", "Dislocation of jaw, left side, initial encounter", 0.0),
        ("elbow dislocation", "Subluxation and dislocation of elbow", 0.0),  # a category naming both
        ("injury of the shoulder", "Anterior subluxation of right humerus, initial encounter", 0.0),  # neither said
        ("dislocated left wrist", "Sprain of unspecified ligament of left wrist, initial encounter", 1.0),
        ("sprained ankle", "Dislocation and sprain of joints and ligaments at ankle, foot and toe level", 0.0),
    ],
)
def test_a_subluxation_a_dislocation_and_a_sprain_are_told_apart(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("acute maxillary sinusitis", "Chronic maxillary sinusitis", 1.0),
        ("chronic pancreatitis", "Acute pancreatitis without necrosis or infection, unspecified", 1.0),
        ("acute osteomyelitis of the left tibia", "Subacute osteomyelitis, left tibia and fibula", 1.0),
        ("subacute bronchitis", "Acute bronchitis, unspecified", 0.0),  # the index files it under acute
        ("acute on chronic diastolic heart failure", "Acute diastolic (congestive) heart failure", 0.0),  # both said
        ("pancreatitis", "Acute pancreatitis without necrosis or infection, unspecified", 0.0),  # no course said
    ],
)
def test_an_acute_course_is_not_a_chronic_one(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("fracture of the distal right tibia", "Unspecified fracture of upper end of right tibia", 1.0),
        ("proximal humerus fracture", "Other fracture of lower end of humerus", 1.0),
        ("fracture of the distal left ulna", "Torus fracture of lower end of left radius", 1.0),  # another bone
        ("distal radius fracture", "Unspecified fracture of the lower end of left radius", 0.0),
        ("distal muscle weakness", "Proximal muscle weakness", 1.0),  # HPO says it of muscles too
        ("fracture of forearm", "Unspecified fracture of shaft of right ulna", 0.0),  # no bone or end said
    ],
)
def test_a_long_bones_end_and_the_bone_itself_are_sites_told_apart(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("sickle cell anemia, Hb-SS disease, acute chest", "Sickle-cell/Hb-C disease with acute chest syndrome", 1.0),
        ("sickle cell anemia, Hb-SS disease, acute chest", "Hb-SS disease with acute chest syndrome", 0.0),
        ("HbSC disease in crisis", "Hb-SS disease with crisis, unspecified", 1.0),
        ("sickle cell crisis", "Sickle-cell/Hb-C disease with crisis", 0.0),  # no genotype said
    ],
)
def test_a_sickle_cell_diseases_genotypes_are_told_apart(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("lobar pneumonia caused by Haemophilus influenzae", "Lobar pneumonia, unspecified organism", 1.0),
        ("MSSA sepsis", "Sepsis, unspecified organism", 1.0),
        ("bronchopneumonia", "Bronchopneumonia, unspecified organism", 0.0),  # no cause said
        ("pneumonia due to Klebsiella", "Pneumonia due to Klebsiella pneumoniae", 0.0),
        ("sepsis due to pneumonia", "Sepsis, unspecified organism", 0.0),  # a cause, but no organism
        ("community acquired pneumonia, covid negative", "Pneumonia, unspecified organism", 0.0),  # ruled out
    ],
)
def test_an_organism_said_is_no_unspecified_organism(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("klebsiella UTI", "Sepsis due to other Gram-negative organisms", 1.0),  # an infection is no sepsis
        ("urosepsis from E. coli", "Sepsis due to Escherichia coli [E. coli]", 1.0),  # no code of its own: asked
        ("septic arthritis of the knee", "Sepsis, unspecified organism", 1.0),  # a septic joint is no sepsis
        ("candidemia", "Candidal sepsis", 0.0),
        ("septic shock", "Severe sepsis with septic shock", 0.0),
        ("pneumonia, no sepsis", "Sepsis, unspecified organism", 1.0),  # ruled out is not said
    ],
)
def test_a_sepsis_is_coded_only_when_said(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["default_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        # a drug beside a condition is its treatment, not its adverse effect or a poisoning
        ("hypertension on nifedipine", "Adverse effect of calcium-channel blockers, initial encounter", 1.0),
        ("rash from amoxicillin, allergic reaction", "Adverse effect of penicillins, initial encounter", 0.0),
        ("low potassium after furosemide", "Poisoning by loop [high-ceiling] diuretics, accidental (unintentional)", 1.0),
        ("took too many paracetamol", "Poisoning by 4-Aminophenol derivatives, intentional self-harm", 0.0),
        ("rattlesnake bite", "Toxic effect of venom of rattlesnake, accidental (unintentional)", 0.0),
        # a complication of a device only when a device is named
        ("urinary tract infection", "Infection and inflammatory reaction due to indwelling urethral catheter", 1.0),
        ("UTI from her foley", "Infection and inflammatory reaction due to indwelling urethral catheter", 0.0),
        ("infected knee replacement", "Infection and inflammatory reaction due to internal right knee prosthesis", 0.0),
        ("s/p CABG", "Presence of aortocoronary bypass graft", 0.0),  # a status, no complication
        ("hip pain", "Broken internal right hip prosthesis, initial encounter", 1.0),
        ("broken hip replacement", "Broken internal right hip prosthesis, initial encounter", 0.0),
        ("jammed finger", "Dislocation of interphalangeal joint of right index finger, initial encounter", 0.0),  # no device
        # a fall only when one is told
        ("short of breath on stairs", "Fall (on) (from) unspecified stairs and steps, initial encounter", 1.0),
        ("slipped on the stairs", "Fall (on) (from) unspecified stairs and steps, initial encounter", 0.0),
        ("slipped disc", "Fall on same level from slipping, tripping and stumbling, initial encounter", 1.0),
        # a fracture's healing is routine unless said otherwise
        (
            "wrist fracture follow-up, healing well",
            "Colles' fracture of left radius, subsequent encounter with delayed healing",
            1.0,
        ),
        ("tibia fracture, nonunion", "Fracture of shaft of right tibia, subsequent encounter with nonunion", 0.0),
    ],
)
def test_what_is_coded_only_when_said(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["default_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("osteoporotic T12 fracture", "Wedge fracture of T12 vertebra, initial encounter for closed fracture", "with"),
        ("fracture of the right hip", "Age-related osteoporosis with current pathological fracture, right femur", "default"),
        ("stress fracture, left second metatarsal", "Stress fracture, left metatarsal(s), initial encounter for fracture", None),
        ("osteoporosis", "Age-related osteoporosis without current pathological fracture", None),  # no fracture named
    ],
)
def test_a_fracture_is_traumatic_unless_said_to_be_pathological(
    query: str, name: str, conflict: str | None
) -> None:
    found = _features(query, name)
    assert (found["with_conflict"], found["default_conflict"]) == (float(conflict == "with"), float(conflict == "default"))


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        # a grade the query does not state: the ungraded concept, or the unspecified code, is meant
        ("microcephaly", "Mild microcephaly", 1.0),
        ("major depression, single episode", "Major depressive disorder, single episode, moderate", 1.0),
        ("MDD single episode, mod", "Major depressive disorder, single episode, moderate", 0.0),
        ("severe short stature", "Severe short stature", 0.0),
        ("obesity, morbid", "Morbid (severe) obesity due to excess calories", 0.0),  # a gloss, not a grade
        ("septic shock", "Severe sepsis with septic shock", 0.0),  # a name, not a grade
        # both sides or one, either, when the query states no side
        ("droopy eyelid", "Bilateral ptosis", 1.0),
        ("droopy eyelid on one side", "Unilateral ptosis", 0.0),
        ("droopy left eyelid", "Unilateral ptosis", 0.0),
        ("undescended testicle", "Unilateral cryptorchidism", 1.0),
        ("hip osteoarthritis", "Unilateral primary osteoarthritis, right hip", 1.0),
        ("carpal tunnel", "Carpal tunnel syndrome, right upper limb", 0.0),  # right or left alone: no conflict
    ],
)
def test_an_unstated_grade_or_side_is_a_default_conflict(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["default_conflict"] == conflict


def test_a_word_said_outside_a_negation_is_not_negated() -> None:
    name = Details.of("Unspecified ectopic pregnancy without intrauterine pregnancy")
    assert name.negated == {"intrauterin"}
    tubal = "Unspecified tubal pregnancy without intrauterine pregnancy"
    assert _features("pregnancy, tubal", tubal)["with_conflict"] == 0.0
    assert _features("intrauterine pregnancy", tubal)["with_conflict"] == 1.0


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        # one direction of a size, an amount or a rate against a name only of the other turns the meaning over
        ("his head looks too small", "Macrocephaly", 1.0),
        ("his head looks too small", "Microcephaly", 0.0),
        ("heart rate slow", "Tachycardia", 1.0),
        ("potassium high on labs", "Hypokalemia", 1.0),
        ("head circumference < 2nd centile", "Increased head circumference", 1.0),
        # a place or a part is no direction
        ("low back pain", "Hyperlordosis", 0.0),
        ("big toe pain", "Hallux rigidus", 0.0),
        ("urethral opening on the underside", "Hypospadias", 0.0),
        ("microscopic blood in urine", "Gross hematuria", 0.0),
        # a query saying both ways says neither
        ("small head and large ears", "Macrotia", 0.0),
    ],
)
def test_an_opposite_direction_is_a_conflict(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


def test_non_negates_the_rest_of_its_word() -> None:
    assert Details.of("Other acute nonsuppurative otitis media").negated == {"suppur"}
    assert _features("acute suppurative otitis media", "Other acute nonsuppurative otitis media")["with_conflict"] == 1.0
    assert Details.of("Fracture of shaft of right tibia, subsequent encounter with nonunion").requires == {"delayed healing"}


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("his left eye drifts inward", "Exotropia", 1.0),
        ("his left eye drifts inward", "Esotropia", 0.0),
        ("wall-eyed", "Esotropia", 1.0),
        ("her eye turns out when she is tired", "Intermittent exotropia", 0.0),
    ],
)
def test_the_way_a_squinting_eye_turns_is_a_kind(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("postpartum hemorrhage within 24 hours of delivery", "Delayed and secondary postpartum hemorrhage", 1.0),
        ("postpartum hemorrhage within 24 hours of delivery", "Other immediate postpartum hemorrhage", 0.0),
        ("PPH in the first 24h", "Delayed and secondary postpartum hemorrhage", 1.0),
        (
            "PROM, labour more than 24 hours after rupture",
            "Premature rupture of membranes, onset of labor within 24 hours of rupture",
            1.0,
        ),
        ("delayed hypersensitivity to a drug", "Immediate-type hypersensitivity drug reaction", 1.0),
        # a query that does not say when says neither
        ("postpartum hemorrhage", "Delayed and secondary postpartum hemorrhage", 0.0),
    ],
)
def test_within_or_after_the_first_day_is_a_kind(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict


@pytest.mark.parametrize(
    ("query", "name", "conflict"),
    [
        ("personal history of colon cancer", "Personal history of colon polyps", 1.0),
        ("personal history of colon cancer", "Personal history of other malignant neoplasm of large intestine", 0.0),
        ("breast carcinoma", "Carcinoma in situ of breast", 1.0),
        ("DCIS of the left breast", "Malignant neoplasm of left female breast", 1.0),
        ("melanoma in situ of the cheek", "Melanoma in situ of other parts of face", 0.0),
        # a tumour of no stated behaviour is any
        ("brain tumour", "Benign neoplasm of brain, unspecified", 0.0),
    ],
)
def test_a_neoplasms_behaviour_is_a_kind(query: str, name: str, conflict: float) -> None:
    assert _features(query, name)["with_conflict"] == conflict
