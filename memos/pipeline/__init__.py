"""The run engine, the same for every workflow: driver (enqueue, claim, execute, finish, fail, resume),
claims and liveness (who holds a run, fenced writes), the watchdog, the LLM ledger and gateway, the jobs and
the worker. One package per workflow holds its stage bodies (``memo/``)."""
