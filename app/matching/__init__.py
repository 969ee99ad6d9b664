"""Batch ontology matching: the matcher, its request and result, SSSOM and FHIR ConceptMap writers, jobs."""
