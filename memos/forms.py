"""Forms for the pages. The rules about a brief (known ticker, a question, its length) live in
services.runs; a form only collects the fields, so a person sees the service's own message."""

from __future__ import annotations

from django import forms
from django.conf import settings

from agents.memo.roster import Profile


def _profile_choices() -> list[tuple[str, str]]:
    profiles: dict[str, Profile] = settings.MEMO_PROFILES
    return [
        (
            name,
            f"{name}: {len(profile.roster)} specialists, "
            f"{profile.iterations} synthesis iteration{'s' if profile.iterations != 1 else ''}",
        )
        for name, profile in sorted(profiles.items(), key=lambda item: (len(item[1].roster), item[0]))
    ]


class BriefForm(forms.Form):
    # required=False on purpose: services.runs.create_brief owns these rules and words the messages; the
    # `required` attribute only spares the browser a round trip.
    ticker = forms.CharField(
        max_length=16,
        required=False,
        widget=forms.TextInput(attrs={"required": True, "autocomplete": "off", "placeholder": "AAPL"}),
    )
    question = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"required": True, "rows": 3, "placeholder": "What should the memo answer?"}
        ),
    )
    audience = forms.CharField(max_length=200, required=False, initial="Investment committee")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    profile = forms.ChoiceField(choices=_profile_choices, initial="quick", widget=forms.RadioSelect)
    # What the run produces: the memo (seed 000) or the C-suite deck (seed 001); the profile applies to both.
    workflow = forms.ChoiceField(
        choices=[
            ("memo", "Investment memo"),
            ("deck", "Deck: a C-suite slide deck, refined by a scored loop"),
        ],
        initial="memo",
        required=False,
        widget=forms.RadioSelect,
    )
