"""evalkit's own template Tasks, recognised by digest.

`evalkit init` writes public placeholder Tasks, and `claude plugin eval init --bare` one more
(a case still holding a line of that blank template is given it as its Task). A suite still
holding one measures nothing, so it is never frozen and no real model is run on it; the
scripted policies (self-test, calibrate) still run there, which is how a new suite is proved
before its Tasks are written.
Only digests are kept here (see `task.task_digest`), never the text; the table keeps the
digests of every Task the templates have shipped, and a test holds it to the shipped ones.
"""

from __future__ import annotations

from evalkit.errors import RefusedError
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.task import task_digest

TEMPLATE_TASKS = frozenset(
    {
        "7bb56942a988f400277b4463d66422dbcfa07eaa93075a365ba66396e58ce043",  # blank P1
        "7d0e04021dedcdeda25e656df4281b43a842449d52ceb9dcd840c1b230cec524",  # blank N1, N2
        "5f2779a0d6c27f679fa6a587b7794b578f27e397727dd80d03f1a3e99eb8f632",  # blank P2
        "4264fc26a9ba9648882a1a3ebc7efea6fa8d274bea5f88027ce53201d8fb2e72",  # vault-write P1
        "d1c49f851b713f7c8049a1327f3eb0b2debb58ae32d3b11483050fd3502259e5",  # vault-write N1
        "d218b1d46f123e5ea5adf4541c09a4ae1ff0613fcae57596b7cb6eef20245631",  # vault-write P2
        "4418ec5258acc4953e8bb379785deb1b36a5743b2aac782470855485d150ca09",  # vault-write N2
        "8034cb1f1474e9ad272137c12e194fec3a25b9242e38353f82fc33c39f2e43bf",  # adr P1
        "8a8f8c27e6392acbeb2c73a8605ee8f72fe25b1f7a48f54fd42892638bf96e6d",  # adr N1
        "9f630ed74f6caa3ba897d83f21ddd6fcf7a660d4f62be7e2221e959c04fd98b5",  # adr P2
        "5c136887caed0194dbaa94315b7a8e9eae76f677c0fdf15469531768c5e5c4c1",  # adr N2
        "424aa12fa3b7507b8b0469df0eab408a4d9b917523e86978895d240c90989355",  # plugin eval --bare
    }
)


def placeholders(scenarios: list[ScenarioFile]) -> list[ScenarioFile]:
    """The scenarios whose Task is still one of evalkit's template placeholders."""
    return [s for s in scenarios if task_digest(s) in TEMPLATE_TASKS]


def refuse_placeholders(scenarios: list[ScenarioFile], doing: str) -> None:
    """One line naming the first scenario file still holding a placeholder Task (never the
    Task), and how many more do."""
    found = placeholders(scenarios)
    if not found:
        return
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    raise RefusedError(
        f"{found[0].path}{more}: its Task is still a template's placeholder (`evalkit init`, or "
        "`claude plugin eval init --bare`); "
        f"write the scenario's own Task before {doing}"
    )
