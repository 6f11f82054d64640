"""The admin's pages for the deck judge's calibration; importing this module registers them
(memos/admin/__init__.py imports it).

Gold scores: a superuser picks a frozen deck version and a rubric and gives one whole score 0-5 per dimension
of that rubric's composite (the active version's); the form refuses a memo version, a missing dimension and
a second score of the same deck by the same person (committee members score on the version page:
memos.pipeline.deck.desk.gold_scores). A gold score is added or deleted, never edited: a calibration already
compared the judge with it. Calibrations are written by the worker (queued from the Calibrations list's
buttons, or after a committee member's score once five decks are scored) or by ``manage.py calibrate_judge``;
they are only read here. Superusers only, like the rest of the admin: gold scores decide whether the loop's
judge is trusted.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import URLPattern, path, reverse

from agents.deck.rubrics import DECK_R1, DECK_R2
from memos.admin.base import RecordAdmin, SuperuserAdmin, superuser
from memos.models import ArtefactVersion, Calibration, GoldScore
from memos.models.calibration import DECK_KIND, SCORE_MAX, SCORE_MIN
from memos.pipeline.deck.desk import calibration, gold_scores

FIELD_PREFIX = "score_"


class GoldScoreForm(forms.ModelForm[GoldScore]):
    """The version, the rubric, and one whole-number field per dimension (added by ``gold_score_form``);
    only the chosen rubric's dimensions are filled in."""

    scorer_id: int | None = None  # who is scoring: set by gold_score_form for one request

    class Meta:
        model = GoldScore
        fields = ("version", "rubric")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        versions: QuerySet[ArtefactVersion] = ArtefactVersion.objects.filter(kind=DECK_KIND).select_related(
            "brief__company"
        )
        version_field = self.fields["version"]
        if isinstance(version_field, forms.ModelChoiceField):
            version_field.queryset = versions

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        scores = {
            name.removeprefix(FIELD_PREFIX): value
            for name, value in data.items()
            if name.startswith(FIELD_PREFIX) and value is not None
        }
        rubric, version = data.get("rubric"), data.get("version")
        if rubric:
            for problem in calibration.gold_score_problems(rubric, scores):
                self.add_error(None, problem)
        if version is not None and rubric and self.scorer_id is not None:
            taken = GoldScore.objects.filter(version=version, rubric=rubric, scored_by_id=self.scorer_id)
            if taken.exists():
                self.add_error(None, f"You have already scored {version} on {rubric}.")
        if version is not None and (refusal := gold_scores.whose_deck(self.scorer_id, version)):
            self.add_error(None, refusal)
        self.instance.scores = scores  # validated by GoldScore.clean in the model form's own check
        return data


def gold_score_form(scorer_id: int) -> type[GoldScoreForm]:
    """The form with a field per dimension of the active R2 and R1 composites (a key both share is one
    field), built per request because a newly activated rubric version may add or drop a dimension."""
    used_by: dict[str, list[str]] = {}
    for name in (DECK_R2, DECK_R1):
        for key in calibration.composite_keys(calibration.active_rubric(name)[1]):
            used_by.setdefault(key, []).append(name)
    fields: dict[str, Any] = {
        f"{FIELD_PREFIX}{key}": forms.IntegerField(
            label=key,
            required=False,
            min_value=SCORE_MIN,
            max_value=SCORE_MAX,
            help_text=f"{SCORE_MIN}-{SCORE_MAX}; used by {', '.join(names)}",
        )
        for key, names in used_by.items()
    }
    return type("GoldScoreAddForm", (GoldScoreForm,), {**fields, "scorer_id": scorer_id})


@admin.register(GoldScore)
class GoldScoreAdmin(SuperuserAdmin[GoldScore]):
    list_display = ("version", "rubric", "scored_by", "scores", "created_at")
    list_filter = ("rubric",)
    search_fields = ("version__brief__company__ticker", "version__title")
    list_select_related = ("version__brief__company", "scored_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None and request.user.pk is not None:
            return gold_score_form(int(request.user.pk))
        return super().get_form(request, obj, change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return []
        return ["version", "rubric", "scores", "scored_by", "created_at"]

    def save_model(self, request: HttpRequest, obj: GoldScore, form: Any, change: bool) -> None:
        if request.user.pk is None:  # has_add_permission let in a superuser only, so never
            raise PermissionDenied
        obj.scored_by_id = int(request.user.pk)
        obj.save()


@admin.register(Calibration)
class CalibrationAdmin(RecordAdmin[Calibration]):
    """Calibrations are read here; a superuser also queues a new one for either rubric from the list's
    buttons (``manage.py calibrate_judge`` does the same in the foreground)."""

    change_list_template = "admin/memos/calibration/change_list.html"
    list_display = (
        "created_at",
        "rubric_version",
        "scorer_model",
        "verdict",
        "within_one_share",
        "examples",
        "skipped",
        "pairs",
    )
    list_filter = ("passed", "scorer_model", "rubric_version__name")
    list_select_related = ("rubric_version",)
    readonly_fields = ("by_dimension_table",)

    def get_urls(self) -> list[URLPattern]:
        return [
            path("calibrate/", self.admin_site.admin_view(self.calibrate_view), name="memos_calibration_run"),
            *super().get_urls(),
        ]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        rubrics = [
            (name, gold_scores.rubric_label(name), gold_scores.scored_versions(name))
            for name in gold_scores.RUBRICS
        ]
        return super().changelist_view(request, {**(extra_context or {}), "calibrate_rubrics": rubrics})

    def calibrate_view(self, request: HttpRequest) -> HttpResponse:
        """POST rubric=deck_r2|deck_r1: queue the judge's calibration on it for the worker."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not superuser(request):
            raise PermissionDenied
        name = request.POST.get("rubric", "")
        changelist = reverse("admin:memos_calibration_changelist")
        if name not in gold_scores.RUBRICS:
            self.message_user(request, f"{name!r} is not a judge rubric: deck_r2 or deck_r1", messages.ERROR)
            return HttpResponseRedirect(changelist)
        scored = GoldScore.objects.filter(rubric=name).count()
        if not scored:
            self.message_user(
                request, f"No gold scores for {name} yet: nothing to compare the judge with.", messages.ERROR
            )
            return HttpResponseRedirect(changelist)
        gold_scores.queue_calibration(name)
        self.message_user(
            request,
            f"Queued: the worker scores the {scored} gold example{'s' if scored != 1 else ''} of {name} with "
            "the judge again (the ledger answers a request it has seen) and the result appears here.",
        )
        return HttpResponseRedirect(changelist)

    @admin.display(description="verdict", boolean=True, ordering="passed")
    def verdict(self, obj: Calibration) -> bool:
        return obj.passed

    @admin.display(description="within +-1", ordering="within_one")
    def within_one_share(self, obj: Calibration) -> str:
        return f"{obj.within_one:.0%}"

    @admin.display(description="per dimension")
    def by_dimension_table(self, obj: Calibration) -> str:
        return "; ".join(
            f"{key}: {calibration.agreement_text(found)}" for key, found in obj.by_dimension.items()
        )
