# The committee's rules held by the database (issue 16, section 3), written by hand.
#
# - A motion pins the review policy it opened under (memos.services.review.tally counts under the pins, never
#   the live policy); the motions open now pin today's policy, those already closed keep none.
# - A version's publication time goes with its status (two checks), and once set it never changes: the
#   executives read the versions that have one (memos.services.access.visible_versions).
# - Votes, motions and notices get triggers like the audit trail's (0008), on every write path (the ORM, the
#   admin, bulk updates, raw SQL): none is ever deleted; a motion keeps its version, its opening and its pins
#   and closes once; a vote is cast or changed only while its motion is open and not by a member who asked
#   for the version's approval (memos.services.review.cast_vote, the sealed ballot); a notice's recipient,
#   version, event and words never change, only its read and e-mail bookkeeping
#   (memos.services.notifications).
# - A notice's e-mail is retried with backoff and given up after the last attempt (the attempt columns).
# - An admin's switch-off of a refinement schedule holds (memos.services.schedules.set_schedule).
#
# Every refusal is an integrity violation, so Django raises IntegrityError.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# 0008's function, with the publication time written once: from empty to set, then never again.
FROZEN_VERSION = """
CREATE OR REPLACE FUNCTION memos_frozen_version() RETURNS trigger AS $$
DECLARE
    mutable text[] := ARRAY['status', 'published_at'];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'version % of brief % is frozen: versions are never deleted', OLD.number, OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - mutable) IS DISTINCT FROM (to_jsonb(OLD) - mutable) THEN
        RAISE EXCEPTION 'version % of brief % is frozen: only its review status may change', OLD.number,
            OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.published_at IS NOT NULL AND NEW.published_at IS DISTINCT FROM OLD.published_at THEN
        RAISE EXCEPTION 'version % of brief % was published at %: its publication time never changes',
            OLD.number, OLD.brief_id, OLD.published_at
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

FROZEN_VERSION_0008 = """
CREATE OR REPLACE FUNCTION memos_frozen_version() RETURNS trigger AS $$
DECLARE
    mutable text[] := ARRAY['status', 'published_at'];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'version % of brief % is frozen: versions are never deleted', OLD.number, OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - mutable) IS DISTINCT FROM (to_jsonb(OLD) - mutable) THEN
        RAISE EXCEPTION 'version % of brief % is frozen: only its review status may change', OLD.number,
            OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

GUARDS = """
CREATE OR REPLACE FUNCTION memos_motion_guard() RETURNS trigger AS $$
DECLARE
    closing text[] := ARRAY['closed_at', 'closed_because'];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'the motion on version % is never deleted', OLD.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.closed_at IS NOT NULL THEN
        RAISE EXCEPTION 'the motion on version % is closed: it never changes again', OLD.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - closing) IS DISTINCT FROM (to_jsonb(OLD) - closing) THEN
        RAISE EXCEPTION 'the motion on version % keeps its version, its opening and the policy it pinned',
            OLD.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER memos_motion_guard BEFORE UPDATE OR DELETE ON memos_motion
    FOR EACH ROW EXECUTE FUNCTION memos_motion_guard();

CREATE OR REPLACE FUNCTION memos_vote_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'votes are never deleted (member % on version %)', OLD.member_id, OLD.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'UPDATE' AND (NEW.id, NEW.version_id, NEW.member_id, NEW.cast_at)
            IS DISTINCT FROM (OLD.id, OLD.version_id, OLD.member_id, OLD.cast_at) THEN
        RAISE EXCEPTION 'a vote keeps its member, its version and when it was cast (member % on version %)',
            OLD.member_id, OLD.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM memos_motion WHERE version_id = NEW.version_id AND closed_at IS NULL) THEN
        RAISE EXCEPTION 'the vote on version % is closed: votes are cast and changed only while it is open',
            NEW.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF EXISTS (
        SELECT 1 FROM memos_auditevent
        WHERE version_id = NEW.version_id AND actor_id = NEW.member_id AND action = 'approval_refused'
    ) THEN
        RAISE EXCEPTION 'member % asked for the approval of version % and learned whether its threshold is '
            'met: their vote is locked', NEW.member_id, NEW.version_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER memos_vote_guard BEFORE INSERT OR UPDATE OR DELETE ON memos_vote
    FOR EACH ROW EXECUTE FUNCTION memos_vote_guard();

CREATE OR REPLACE FUNCTION memos_notice_guard() RETURNS trigger AS $$
DECLARE
    bookkeeping text[] := ARRAY[
        'read_at', 'sending_since', 'emailed_at', 'email_error', 'email_attempts', 'next_email_at',
        'email_failed_at'
    ];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'notices are never deleted (notice % to user %)', OLD.id, OLD.recipient_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - bookkeeping) IS DISTINCT FROM (to_jsonb(OLD) - bookkeeping) THEN
        RAISE EXCEPTION 'notice % keeps its recipient, version, event and words: only its reading and its '
            'e-mail move', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER memos_notice_guard BEFORE UPDATE OR DELETE ON memos_notice
    FOR EACH ROW EXECUTE FUNCTION memos_notice_guard();
"""

NO_GUARDS = """
DROP TRIGGER IF EXISTS memos_notice_guard ON memos_notice;
DROP FUNCTION IF EXISTS memos_notice_guard();
DROP TRIGGER IF EXISTS memos_vote_guard ON memos_vote;
DROP FUNCTION IF EXISTS memos_vote_guard();
DROP TRIGGER IF EXISTS memos_motion_guard ON memos_motion;
DROP FUNCTION IF EXISTS memos_motion_guard();
"""


def pin_open_motions(apps: object, schema_editor: object) -> None:
    """The motions open now keep working: they pin today's policy (its defaults if the row is missing).
    Closed ones keep none: their policy then is not known, and nothing is decided under it any more."""
    policy_model = apps.get_model("memos", "ReviewPolicy")  # type: ignore[attr-defined]
    motion_model = apps.get_model("memos", "Motion")  # type: ignore[attr-defined]
    policy = policy_model.objects.filter(pk=1).first()
    if policy is None:
        min_votes = policy_model._meta.get_field("min_votes").default
        approval_share = policy_model._meta.get_field("approval_share").default
    else:
        min_votes, approval_share = policy.min_votes, policy.approval_share
    motion_model.objects.filter(closed_at__isnull=True).update(
        min_votes=min_votes, approval_share=approval_share
    )


class Migration(migrations.Migration):

    dependencies = [
        ('memos', '0012_fact_store_changes'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='motion',
            name='approval_share',
            field=models.FloatField(blank=True, help_text='the threshold pinned when it opened: approvals over this share of the non-recused members', null=True),
        ),
        migrations.AddField(
            model_name='motion',
            name='min_votes',
            field=models.PositiveSmallIntegerField(blank=True, help_text='the quorum pinned when it opened: non-recused votes cast, at least', null=True),
        ),
        migrations.AddField(
            model_name='notice',
            name='email_attempts',
            field=models.PositiveSmallIntegerField(default=0, help_text='failed attempts to e-mail it'),
        ),
        migrations.AddField(
            model_name='notice',
            name='email_failed_at',
            field=models.DateTimeField(blank=True, help_text='the last attempt failed: the e-mail is given up, the notice stays', null=True),
        ),
        migrations.AddField(
            model_name='notice',
            name='next_email_at',
            field=models.DateTimeField(blank=True, help_text='after a failed attempt: no sender tries again before this', null=True),
        ),
        migrations.AddField(
            model_name='refineschedule',
            name='held_off_by_admin',
            field=models.BooleanField(default=False, help_text='an admin switched it off: only an admin switches it back on'),
        ),
        migrations.AlterField(
            model_name='notice',
            name='event',
            field=models.CharField(choices=[('frozen', 'New version ready'), ('vote_needed', 'Your vote is needed'), ('quorum_reached', 'Ready for approval'), ('changes_requested', 'Changes requested'), ('approved', 'Approved'), ('published', 'Published'), ('falsifier_hit', 'A falsifier was hit'), ('escalated', 'Escalated: it never cleared the entry bar')], max_length=20),
        ),
        migrations.AlterField(
            model_name='notice',
            name='recipient',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='notices', to=settings.AUTH_USER_MODEL),
        ),
        migrations.RunPython(pin_open_motions, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='artefactversion',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'published'), _negated=True), ('published_at__isnull', False), _connector='OR'), name='a_published_version_says_when'),
        ),
        migrations.AddConstraint(
            model_name='artefactversion',
            constraint=models.CheckConstraint(condition=models.Q(('published_at__isnull', True), ('status__in', ['published', 'superseded']), _connector='OR'), name='only_a_published_version_has_a_publication_time'),
        ),
        migrations.AddConstraint(
            model_name='motion',
            constraint=models.CheckConstraint(condition=models.Q(('closed_at__isnull', False), models.Q(('approval_share__isnull', False), ('min_votes__isnull', False)), _connector='OR'), name='an_open_motion_has_its_policy_pinned'),
        ),
        migrations.AddConstraint(
            model_name='refineschedule',
            constraint=models.CheckConstraint(condition=models.Q(('held_off_by_admin', False), ('enabled', False), _connector='OR'), name='refine_schedule_held_off_is_off'),
        ),
        migrations.RunSQL(FROZEN_VERSION, FROZEN_VERSION_0008),
        migrations.RunSQL(GUARDS, NO_GUARDS),
    ]
