"""The generated types and methods match docs/openapi.yaml, and cover all of it."""
from __future__ import annotations

import importlib.util
import inspect
import sys
import typing
import unittest
from pathlib import Path
from typing import Any, Dict, List

import agentmem
from agentmem import ERRORS, FUNCTIONS, OPS, Client, types
from agentmem._api import AsyncFunctions, Functions

ROOT = Path(__file__).resolve().parent.parent
PER_CALL = {"self", "options", "idempotency_key"}


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("agentmem_generate", ROOT / "scripts" / "generate.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["agentmem_generate"] = mod
    spec.loader.exec_module(mod)
    return mod


gen = load_generator()
SPEC: Dict[str, Any] = gen.load_spec()
# CLIENT_FUNCTIONS are the document's functions the client calls: all but those of another
# protocol (mcp), which that protocol's clients speak to.
CLIENT_FUNCTIONS = [p[len("/v1/"):] for p in SPEC["paths"] if p[len("/v1/"):] not in gen.OTHER_PROTOCOLS]


def request_schema(fn: str, op: Any) -> Dict[str, Any]:
    body = SPEC["paths"][f"/v1/{fn}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    ref = body["discriminator"]["mapping"][op] if op else body["$ref"]
    return SPEC["components"]["schemas"][ref.rsplit("/", 1)[1]]


def method_of(root: Any, fn: str, op: Any) -> Any:
    if op is None:
        return getattr(root, fn.replace("-", "_"))
    return getattr(getattr(root, fn.replace("-", "_")), op)


def every_call() -> List[Any]:
    out = []
    for fn in CLIENT_FUNCTIONS:
        for op in OPS.get(fn, (None,)):
            out.append((fn, op))
    return out


class GeneratedTest(unittest.TestCase):
    def test_generated_files_match_the_api_document(self) -> None:
        for path, text in gen.render(SPEC).items():
            with self.subTest(file=path.name):
                self.assertEqual(
                    path.read_text(encoding="utf-8"),
                    text,
                    f"{path} is stale: run `python3 scripts/generate.py` in clients/python",
                )

    def test_a_changed_document_changes_the_generated_files(self) -> None:
        # The check above can fail: a field added to the document shows in both files.
        import copy

        spec = copy.deepcopy(SPEC)
        spec["components"]["schemas"]["RecallRequest"]["properties"]["invented_option"] = {"type": "integer"}
        files = gen.render(spec)
        self.assertIn("invented_option: int", files[gen.TYPES])
        self.assertIn("invented_option: Optional[int] = None", files[gen.API])
        self.assertNotEqual(files[gen.API], gen.API.read_text(encoding="utf-8"))
        # An op the generator has no answer type for stops it.
        spec["paths"]["/v1/user-state"]["post"]["requestBody"]["content"]["application/json"]["schema"][
            "discriminator"]["mapping"]["invented_op"] = "#/components/schemas/UserStateOtherRequest"
        with self.assertRaises(SystemExit):
            gen.render(spec)

    def test_functions_and_ops_are_those_of_the_document(self) -> None:
        self.assertEqual(list(FUNCTIONS), CLIENT_FUNCTIONS)
        self.assertIn("mcp", gen.OTHER_PROTOCOLS)
        self.assertFalse(hasattr(Functions, "mcp"), "mcp is spoken to by MCP clients")
        for fn, ops in OPS.items():
            body = SPEC["paths"][f"/v1/{fn}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            self.assertEqual(set(ops), set(body["discriminator"]["mapping"]), fn)

    def test_every_function_and_option_is_a_keyword_argument(self) -> None:
        client = Client("http://127.0.0.1:9")
        for fn, op in every_call():
            with self.subTest(fn=fn, op=op):
                schema = request_schema(fn, op)
                fields = set(schema.get("properties", {})) - {"op"}
                method = method_of(client, fn, op)
                params = inspect.signature(method).parameters
                self.assertEqual(set(params) - PER_CALL, fields)
                for name in schema.get("required", []):
                    if name != "op":
                        self.assertIs(params[name].default, inspect.Parameter.empty, f"{name} is required")
                self.assertTrue(all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values()))
                self.assertTrue((method.__doc__ or "").startswith(method.__name__ + " "))

    def test_async_methods_mirror_the_sync_ones(self) -> None:
        for fn, op in every_call():
            with self.subTest(fn=fn, op=op):
                sync = method_of(Functions, fn, None) if op is None else getattr(
                    typing.get_type_hints(Functions)[fn.replace("-", "_")], op)
                asyn = method_of(AsyncFunctions, fn, None) if op is None else getattr(
                    typing.get_type_hints(AsyncFunctions)[fn.replace("-", "_")], op)
                self.assertTrue(inspect.iscoroutinefunction(asyn))
                self.assertEqual(list(inspect.signature(sync).parameters), list(inspect.signature(asyn).parameters))

    def test_every_error_code_has_its_class(self) -> None:
        codes = set(typing.get_args(types.ErrorCode))
        self.assertEqual(codes, set(SPEC["components"]["schemas"]["ErrorCode"]["enum"]))
        self.assertEqual(set(ERRORS), codes)
        for code, cls in ERRORS.items():
            self.assertTrue(issubclass(cls, agentmem.AgentMemError))
            self.assertEqual(cls.default_code, code)

    def test_types_resolve_at_run_time(self) -> None:
        # Every TypedDict's annotations evaluate on this Python (3.9 syntax only).
        count = 0
        for name in dir(types):
            obj = getattr(types, name)
            if isinstance(obj, type) and issubclass(obj, dict) and hasattr(obj, "__required_keys__"):
                typing.get_type_hints(obj)
                count += 1
        self.assertGreater(count, 50)
        self.assertEqual(types.MessageIn.__required_keys__, frozenset({"role"}))
        self.assertIn("session_id", types.CommitTurnRequest.__required_keys__)


if __name__ == "__main__":
    unittest.main()
