"""Where figures and untrusted text come from: companies, code-owned facts with their citations, source
documents, and the data loads that brought them in. Rows here are written by code (loaders, the data stage),
never by hand: the admin shows them read-only."""

from __future__ import annotations

from typing import ClassVar

from django.db import models
from django.utils import timezone


class Company(models.Model):
    ticker = models.CharField(max_length=16, unique=True)
    cik = models.PositiveIntegerField(null=True, blank=True, unique=True)
    name = models.CharField(max_length=200)
    taxonomy = models.CharField(
        max_length=20, blank=True, help_text="us-gaap, ifrs-full, or inline XBRL only"
    )
    sector = models.CharField(max_length=80, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Live mode's daily refresh of its SEC figures (memos.services.fact_refresh): when it last succeeded, and
    # why the last attempt failed ("" when it did not).
    facts_refreshed_at = models.DateTimeField(null=True, blank=True)
    refresh_failed_at = models.DateTimeField(null=True, blank=True)
    refresh_error = models.CharField(max_length=500, blank=True, db_default="")

    class Meta:
        ordering: ClassVar = ["ticker"]
        verbose_name_plural = "companies"

    def __str__(self) -> str:
        return f"{self.ticker} ({self.name})"


class FactRecord(models.Model):
    """A number owned by code (EDGAR, prices, the analysis engine) with its citation.

    ``fact_id`` is the stable id agents cite and the memo and deck render through.
    """

    class Source(models.TextChoices):
        COMPANYFACTS = "sec-companyfacts", "SEC companyfacts"
        INLINE_XBRL = "sec-inline-xbrl", "SEC inline XBRL filing"
        PRICES = "prices", "Daily prices"
        DERIVED = "derived", "Derived by code"

    fact_id = models.CharField(max_length=120, unique=True)
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="facts")
    metric = models.CharField(max_length=60)
    value = models.DecimalField(max_digits=32, decimal_places=10)
    unit = models.CharField(max_length=30)
    period_start = models.DateField(null=True, blank=True)
    period_end = models.DateField()
    fiscal_year = models.IntegerField(null=True, blank=True)
    fiscal_period = models.CharField(max_length=8)
    source = models.CharField(max_length=20, choices=Source.choices)
    concept = models.CharField(max_length=160, blank=True)
    form = models.CharField(max_length=20, blank=True)
    accession = models.CharField(max_length=25, blank=True)
    filed = models.DateField(null=True, blank=True)
    url = models.URLField(max_length=400)
    label = models.CharField(max_length=300, blank=True)
    derivation = models.TextField(blank=True)
    inputs = models.JSONField(default=list, blank=True, help_text="fact ids this figure was computed from")
    data_version = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["company", "metric", "period_end"]
        indexes: ClassVar = [models.Index(fields=["company", "metric", "period_end"])]

    def __str__(self) -> str:
        return self.fact_id


class SourceDocument(models.Model):
    """Untrusted text (news, filing excerpts, prediction markets, social posts), normalised before it was
    stored."""

    class Kind(models.TextChoices):
        NEWS = "news"
        FILING = "filing"
        PREDICTION_MARKET = "prediction-market"
        SOCIAL = "social"
        OTHER = "other"

    doc_id = models.CharField(max_length=80, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    title = models.CharField(max_length=500)
    url = models.URLField(max_length=1000)
    published = models.DateField(null=True, blank=True)
    source = models.CharField(max_length=120)
    text = models.TextField(blank=True)
    tickers = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-published", "doc_id"]

    def __str__(self) -> str:
        return f"{self.doc_id}: {self.title[:60]}"


class DataLoad(models.Model):
    """One load of a data snapshot into the fact store; its ``data_version`` (a content hash) makes
    reloading an unchanged snapshot a no-op and lets a run name exactly which data it was given."""

    data_version = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=300, help_text="what was loaded (the snapshot folder)")
    counts = models.JSONField(default=dict, blank=True)
    loaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-loaded_at"]

    def __str__(self) -> str:
        return f"{self.data_version[:12]} loaded {self.loaded_at:%Y-%m-%d %H:%M}"


class RawResponse(models.Model):
    """What a live source sent, byte for byte (gzip-packed), kept so a figure can be derived again from it
    (seed 001 T1: "cache raw"). One row per URL and content: the same answer fetched again only moves
    ``last_seen_at``; a changed one (a new filing) is a new row beside the old."""

    url = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64, help_text="of the bytes as sent (unpacked)")
    size = models.PositiveIntegerField(help_text="bytes as sent (unpacked)")
    body = models.BinaryField(help_text="the bytes as sent, gzip-packed")
    fetched_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-fetched_at", "-pk"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["url", "sha256"], name="one_raw_response_per_content")
        ]

    def __str__(self) -> str:
        return f"{self.url} ({self.sha256[:12]}, {self.fetched_at:%Y-%m-%d %H:%M})"
