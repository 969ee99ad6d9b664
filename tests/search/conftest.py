from tests.api.conftest import built, client  # noqa: F401 - the toy app, shared with the REST tests
