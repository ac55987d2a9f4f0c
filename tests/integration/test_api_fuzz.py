"""The gateway's OpenAPI schema, fuzzed with schemathesis against the running services.

Every operation gets a bounded number of generated requests, valid and invalid (derandomized:
the same requests every run). No response may be a 500, a status the operation does not declare
(its error statuses are declared, a query's 502 failed and 504 timed out too), or a body that does
not match the schema for its status (every error: the one `ErrorBody`).
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

EXAMPLES_PER_OPERATION = 15


@pytest.fixture(scope="module")
def fuzzed_gateway(gateway: Gateway, indexer: Any) -> Gateway:
    return gateway


@pytest.fixture(scope="module")
def indexer(stack: Any) -> Any:
    """One indexer for the module, so that a ready document exists and queries reach every stage."""
    with stack.running("indexer") as process:
        yield process


@pytest.fixture(scope="module")
def gateway_schema(fuzzed_gateway: Gateway) -> Any:
    upload_ready(fuzzed_gateway, manual_pdf(unit=911), "unit-911.pdf")
    return schemathesis.openapi.from_url(f"{fuzzed_gateway.url}/openapi.json")


def test_no_operation_answers_an_undeclared_status_or_body(gateway_schema: Any, fuzzed_gateway: Gateway) -> None:
    operations = [result.ok() for result in gateway_schema.get_all_operations()]
    assert len(operations) >= 10, "the schema lists the API's operations"
    for operation in operations:
        declared = {str(status) for status in operation.definition.raw.get("responses", {})}

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        def as_declared(case: Any) -> None:
            response = case.call(base_url=fuzzed_gateway.url, headers=fuzzed_gateway.auth, timeout=60)
            status = response.status_code
            # Run at once, within this iteration: the loop variable is the current one.
            assert status != 500 and (status < 500 or str(status) in declared), (  # noqa: B023
                f"{case.method} {case.formatted_path} -> {status}: {response.text[:500]}")
            case.validate_response(response, checks=[status_code_conformance, response_schema_conformance,
                                                     content_type_conformance])

        as_declared()
