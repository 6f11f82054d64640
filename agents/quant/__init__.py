"""The quant engine: indicators and a point-in-time profile from daily prices, stored as cited facts."""

from agents.quant.facts import quant_facts
from agents.quant.profile import UNITS, QuantProfile, compute_profile

__all__ = ["UNITS", "QuantProfile", "compute_profile", "quant_facts"]
