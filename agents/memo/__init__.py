"""The critiqued fan-in memo (seed 000): specialists generate, the synthesizer fuses under J+/J- rubric
pressure, the evaluator grades; every rule that decides anything (citations, dedup, hill-climb, the
fact-stability audit, the LOW-tier firewall, the verdict) is code in this package, not a model's opinion."""
