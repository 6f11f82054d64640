"""The admin's pages for versioned prompts and rubrics (registered here).

A version never changes: its page shows it, and its form is the draft of the next one. "Save" makes the next
version of that name, based on the one shown, or refuses with every problem named (the checks of
memos.services.governance); the version shown stays as it was. A version is used only once activated: the
"activate" action (or the form's checkbox) makes it the one active version of its name, which runs started
from then on pin; runs already started keep theirs. Nothing is added from scratch or deleted here (a trigger
refuses deleting a version anyway). Superusers only, like the rest of the admin: a prompt steers every model
call, so model permissions handed to a staff member do not open these pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar
from weakref import WeakKeyDictionary

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents.llm.errors import PromptError
from agents.llm.prompts import parse_prompt
from agents.rubrics import Rubric
from memos.admin.base import SuperuserAdmin
from memos.models import PromptVersion, RubricVersion
from memos.models.governance import GovernedVersion
from memos.services import governance
from memos.services.errors import ServiceError

V = TypeVar("V", bound=GovernedVersion)


class VersionForm(ModelForm[V]):
    """The next version's draft: the shown version's content to edit, a note, and whether to activate it."""

    content = forms.CharField(
        strip=False,  # a prompt's spacing is part of it; governance.normalised only unifies line ends
        widget=forms.Textarea(attrs={"rows": 32, "cols": 120, "class": "vLargeTextField"}),
        help_text="Saving stores this as a new version; the version shown stays as it is.",
    )
    note = forms.CharField(
        required=False, max_length=300, help_text="What changed and why (shown in the version list)."
    )
    activate = forms.BooleanField(
        required=False,
        label="Activate the new version",
        help_text="New runs use it; started runs keep theirs.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initial["note"] = ""  # the note is the new version's, not the old one's

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        content = data.get("content")
        if isinstance(content, str):
            for problem in governance.edit_problems(self.instance, content):
                self.add_error("content", problem)
        return data

    def _post_clean(self) -> None:
        # Nothing is validated against the shown row: the draft becomes a new row (memos.services.governance).
        pass


class PromptVersionForm(VersionForm[PromptVersion]):
    class Meta:
        model = PromptVersion
        fields = ("content", "note")


class RubricVersionForm(VersionForm[RubricVersion]):
    class Meta:
        model = RubricVersion
        fields = ("content", "note")


class GovernedVersionAdmin(SuperuserAdmin[V]):
    list_display = (
        "name",
        "version",
        "is_active",
        "source",
        "short_hash",
        "created_by",
        "created_at",
        "note",
    )
    list_display_links = ("name", "version")
    list_filter = ("is_active", "source", "name")
    search_fields = ("name", "note", "content_hash")
    actions = ("activate_versions",)
    readonly = (
        "name",
        "version",
        "is_active",
        "content_hash",
        "source",
        "source_path",
        "based_on",
        "created_by",
        "created_at",
        "activated_by",
        "activated_at",
    )
    readonly_fields = (*readonly, "summary")
    fieldsets = (
        ("This version (never changes)", {"fields": (*readonly, "summary")}),
        ("The next version: edit, then save", {"fields": ("content", "note", "activate")}),
    )
    # The version a save made, from save_form to response_change (one request; gone with it).
    _saved: ClassVar[WeakKeyDictionary[HttpRequest, GovernedVersion]] = WeakKeyDictionary()

    # --- who: superusers only; no adding from scratch, no deleting

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    # --- pages

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra = {"show_save_and_continue": False, "show_save_and_add_another": False, "show_delete": False}
        return super().change_view(request, object_id, form_url, (extra_context or {}) | extra)

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Any:
        """The new version, made from the form (the shown one is never saved): memos.services.governance."""
        base = type(form.instance)._default_manager.get(pk=form.instance.pk)
        saved = self.propose(base, form.cleaned_data["content"], request, form.cleaned_data.get("note", ""))
        if form.cleaned_data.get("activate"):
            governance.activate(version=saved, user=_user(request))
        self._saved[request] = saved
        return saved

    def propose(self, base: V, content: str, request: HttpRequest, note: str) -> V:
        raise NotImplementedError

    def save_model(self, request: HttpRequest, obj: V, form: Any, change: bool) -> None:
        pass  # save_form stored the new version already; nothing else is written

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # a version has no related rows to save

    def log_change(self, request: HttpRequest, obj: V, message: Any) -> Any:
        based_on = obj.based_on.version if obj.based_on is not None else "?"
        return self.log_addition(request, obj, f"New version {obj.version}, edited from version {based_on}.")

    def response_change(self, request: HttpRequest, obj: V) -> HttpResponse:
        saved = self._saved.pop(request, obj)
        state = "active: new runs use it" if saved.is_active else "not active yet: activate it to use it"
        based_on = saved.based_on.version if saved.based_on is not None else "?"
        self.message_user(
            request,
            f"Saved {saved.name} as version {saved.version} ({state}); version {based_on} is unchanged.",
            messages.SUCCESS,
        )
        info = (saved._meta.app_label, saved._meta.model_name)
        return HttpResponseRedirect(reverse("admin:{}_{}_change".format(*info), args=[saved.pk]))

    @admin.action(description="Activate the selected version (runs started from now on use it)")
    def activate_versions(self, request: HttpRequest, queryset: QuerySet[V]) -> None:
        chosen = list(queryset)
        names = [version.name for version in chosen]
        if len(set(names)) != len(names):
            self.message_user(request, "Select at most one version of each name to activate.", messages.ERROR)
            return
        for version in chosen:
            try:
                switched = governance.activate(version=version, user=_user(request))
            except ServiceError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                continue
            said = "is now active" if switched else "was already active"
            self.message_user(request, f"{version.name} v{version.version} {said}.", messages.SUCCESS)

    def summary(self, obj: V) -> SafeString:
        raise NotImplementedError


class PromptVersionAdmin(GovernedVersionAdmin[PromptVersion]):
    form = PromptVersionForm

    def propose(self, base: PromptVersion, content: str, request: HttpRequest, note: str) -> PromptVersion:
        return governance.propose_prompt(base=base, content=content, user=_user(request), note=note)

    @admin.display(description="what the code fills")
    def summary(self, obj: PromptVersion) -> SafeString:
        try:
            parsed = parse_prompt(obj.content.encode("utf-8"), origin=Path(str(obj)))
        except PromptError as exc:
            return format_html("{}", str(exc))
        filled = ", ".join(f"{{{name}}}" for name in sorted(parsed.placeholders)) or "(none)"
        return format_html("{}; answers as {}", filled, parsed.front.output_schema)


class RubricVersionAdmin(GovernedVersionAdmin[RubricVersion]):
    form = RubricVersionForm

    def propose(self, base: RubricVersion, content: str, request: HttpRequest, note: str) -> RubricVersion:
        return governance.propose_rubric(base=base, content=content, user=_user(request), note=note)

    @admin.display(description="dimensions, weights, anchors and thresholds")
    def summary(self, obj: RubricVersion) -> SafeString:
        rubric = Rubric.model_validate(obj.data)
        # Each level's descriptor and quoted example, as the judge reads them (agents.rubrics).
        rows = [
            (
                objective.label,
                dimension.label,
                f"{dimension.weight:g}",
                format_html_join(
                    "",
                    '<div class="anchor"><strong>{}</strong> {} <q class="anchor-example">{}</q></div>',
                    dimension.levels(),
                ),
            )
            for objective in rubric.objectives
            for dimension in objective.dimensions
        ]
        table = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        thresholds = ", ".join(f"{name} {value:g}" for name, value in rubric.thresholds.items()) or "(none)"
        adopted = ", ".join(obj.model_written_anchors)
        return format_html(
            "<table><tr><th>objective</th><th>dimension</th><th>weight</th><th>levels, each with its quoted "
            "example</th></tr>{}</table>"
            "<p>Scale {}-{}; thresholds: {}</p>{}",
            table,
            rubric.scale.min,
            rubric.scale.max,
            thresholds,
            format_html(
                "<p>Model-written anchors at 5 (adopted from a run): {}. The judge reads them fenced, as "
                "untrusted text, until an admin saves an edited version: read them first, since saving "
                "makes them your words.</p>",
                adopted,
            )
            if adopted
            else "",
        )


def _user(request: HttpRequest) -> Any:
    return request.user


admin.site.register(PromptVersion, PromptVersionAdmin)
admin.site.register(RubricVersion, RubricVersionAdmin)
