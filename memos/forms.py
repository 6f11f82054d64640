"""Forms for the pages. The rules about a brief (known ticker, a question, its length) and about a run (the
workflow, its profile) live in the services and the workflows' declarations; a form only collects the
fields, so a person sees the service's own message."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms

from memos.pipeline import registry


@dataclass(frozen=True)
class ProfileChoice:
    name: str
    meanings: list[tuple[str, str]]  # (workflow's choice words, what the profile means for it)


def profile_choices() -> list[ProfileChoice]:
    """Every profile name any workflow offers, with what it means for each workflow that offers it (the
    workflows declare them: memos.pipeline.workflows)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for workflow in registry.WORKFLOWS.values():
        if not workflow.offered:
            continue
        for name, meaning in workflow.profiles().items():
            found.setdefault(name, []).append((workflow.choice.split(":")[0], meaning))
    return [ProfileChoice(name, meanings) for name, meanings in found.items()]


def _profile_field_choices() -> list[tuple[str, str]]:
    return [(choice.name, choice.name) for choice in profile_choices()]


class BriefForm(forms.Form):
    # required=False on purpose: services.runs owns these rules and words the messages; the `required`
    # attribute only spares the browser a round trip.
    ticker = forms.CharField(
        max_length=16,
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "AAPL"}),
    )
    # A screen's subject: symbols separated by commas or spaces; blank screens the desk's demo universe.
    watchlist = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": "XOM, CVX, DUK, NEE (blank: the demo universe)"}
        ),
    )
    question = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"required": True, "rows": 3, "placeholder": "What should the memo answer?"}
        ),
    )
    audience = forms.CharField(max_length=200, required=False, initial="Investment committee")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    profile = forms.ChoiceField(choices=_profile_field_choices, initial="quick", widget=forms.RadioSelect)
    # What the run produces: one of the workflows the desk runs; the memo when the form does not say.
    workflow = forms.ChoiceField(
        choices=registry.form_choices, initial="memo", required=False, widget=forms.RadioSelect
    )
