""" Contains all the data models used in inputs/outputs """

from .actor import Actor
from .agent_info import AgentInfo
from .agent_option import AgentOption
from .agent_option_kind import AgentOptionKind
from .all_hosts import AllHosts
from .answer_accepted import AnswerAccepted
from .answer_choices import AnswerChoices
from .answer_request import AnswerRequest
from .answer_request_answers import AnswerRequestAnswers
from .approval_policy import ApprovalPolicy
from .audit_entry import AuditEntry
from .audit_list import AuditList
from .auth_state import AuthState
from .budget import Budget
from .budget_exhausted_event import BudgetExhaustedEvent
from .budget_exhausted_event_type import BudgetExhaustedEventType
from .budget_exhausted_payload import BudgetExhaustedPayload
from .budget_state import BudgetState
from .call_completed_event import CallCompletedEvent
from .call_completed_event_type import CallCompletedEventType
from .call_completed_payload import CallCompletedPayload
from .call_kind import CallKind
from .call_started_event import CallStartedEvent
from .call_started_event_type import CallStartedEventType
from .call_started_payload import CallStartedPayload
from .call_started_payload_input import CallStartedPayloadInput
from .call_status import CallStatus
from .call_updated_event import CallUpdatedEvent
from .call_updated_event_type import CallUpdatedEventType
from .call_updated_payload import CallUpdatedPayload
from .cancel_accepted import CancelAccepted
from .change_status import ChangeStatus
from .changed_file import ChangedFile
from .checkpoint_info import CheckpointInfo
from .checkpoint_list import CheckpointList
from .checkpoint_phase import CheckpointPhase
from .collaboration_mode import CollaborationMode
from .command_info import CommandInfo
from .commands_updated_event import CommandsUpdatedEvent
from .commands_updated_event_type import CommandsUpdatedEventType
from .commands_updated_payload import CommandsUpdatedPayload
from .commit_author import CommitAuthor
from .commit_request import CommitRequest
from .config_choice import ConfigChoice
from .config_option import ConfigOption
from .config_request import ConfigRequest
from .config_request_options_type_0 import ConfigRequestOptionsType0
from .cost import Cost
from .create_token import CreateToken
from .create_webhook import CreateWebhook
from .created_token import CreatedToken
from .created_webhook import CreatedWebhook
from .current_plan import CurrentPlan
from .decision import Decision
from .delivery import Delivery
from .delivery_attempt import DeliveryAttempt
from .delivery_list import DeliveryList
from .delivery_state import DeliveryState
from .dir_workspace import DirWorkspace
from .dir_workspace_kind import DirWorkspaceKind
from .error_body import ErrorBody
from .error_body_details import ErrorBodyDetails
from .error_frame import ErrorFrame
from .error_frame_type import ErrorFrameType
from .error_info import ErrorInfo
from .error_response import ErrorResponse
from .event_frame import EventFrame
from .event_frame_type import EventFrameType
from .event_list import EventList
from .file_change import FileChange
from .file_content import FileContent
from .file_entry import FileEntry
from .file_input import FileInput
from .file_input_type import FileInputType
from .file_kind import FileKind
from .file_listing import FileListing
from .file_match import FileMatch
from .file_search import FileSearch
from .fork_request import ForkRequest
from .forked_from import ForkedFrom
from .get_session_wait import GetSessionWait
from .goal import Goal
from .goal_cleared_event import GoalClearedEvent
from .goal_cleared_event_type import GoalClearedEventType
from .goal_cleared_payload import GoalClearedPayload
from .goal_origin import GoalOrigin
from .goal_reconcile_required_event import GoalReconcileRequiredEvent
from .goal_reconcile_required_event_type import GoalReconcileRequiredEventType
from .goal_reconcile_required_payload import GoalReconcileRequiredPayload
from .goal_status import GoalStatus
from .goal_updated_event import GoalUpdatedEvent
from .goal_updated_event_type import GoalUpdatedEventType
from .goal_updated_payload import GoalUpdatedPayload
from .health import Health
from .hello_frame import HelloFrame
from .hello_frame_type import HelloFrameType
from .image_input import ImageInput
from .image_input_type import ImageInputType
from .interaction import Interaction
from .interaction_kind import InteractionKind
from .interaction_list import InteractionList
from .interaction_requested_event import InteractionRequestedEvent
from .interaction_requested_event_type import InteractionRequestedEventType
from .interaction_requested_payload import InteractionRequestedPayload
from .interaction_resolved_event import InteractionResolvedEvent
from .interaction_resolved_event_type import InteractionResolvedEventType
from .interaction_resolved_payload import InteractionResolvedPayload
from .interaction_resolved_payload_answers import InteractionResolvedPayloadAnswers
from .isolation import Isolation
from .isolation_mode import IsolationMode
from .isolation_request import IsolationRequest
from .left_worktree import LeftWorktree
from .left_worktree_list import LeftWorktreeList
from .limits_enforcement import LimitsEnforcement
from .me import Me
from .message_completed_event import MessageCompletedEvent
from .message_completed_event_type import MessageCompletedEventType
from .message_delta_event import MessageDeltaEvent
from .message_delta_event_type import MessageDeltaEventType
from .mode_info import ModeInfo
from .network_blocked_event import NetworkBlockedEvent
from .network_blocked_event_type import NetworkBlockedEventType
from .network_blocked_payload import NetworkBlockedPayload
from .notice_event import NoticeEvent
from .notice_event_type import NoticeEventType
from .notice_level import NoticeLevel
from .notice_payload import NoticePayload
from .on_exhausted import OnExhausted
from .open_side_request import OpenSideRequest
from .open_text import OpenText
from .open_text_kind import OpenTextKind
from .openapi_json_response_200 import OpenapiJsonResponse200
from .ping_frame import PingFrame
from .ping_frame_type import PingFrameType
from .plan_step import PlanStep
from .plan_updated_event import PlanUpdatedEvent
from .plan_updated_event_type import PlanUpdatedEventType
from .plan_updated_payload import PlanUpdatedPayload
from .pong_frame import PongFrame
from .pong_frame_type import PongFrameType
from .provider_capabilities import ProviderCapabilities
from .provider_info import ProviderInfo
from .provider_isolation import ProviderIsolation
from .provider_list import ProviderList
from .provider_session import ProviderSession
from .provider_session_list import ProviderSessionList
from .provider_usage import ProviderUsage
from .question import Question
from .question_option import QuestionOption
from .queue_list import QueueList
from .queue_order import QueueOrder
from .queue_updated_event import QueueUpdatedEvent
from .queue_updated_event_type import QueueUpdatedEventType
from .queue_updated_payload import QueueUpdatedPayload
from .queued_edit import QueuedEdit
from .queued_turn import QueuedTurn
from .queued_turn_summary import QueuedTurnSummary
from .reasoning_completed_event import ReasoningCompletedEvent
from .reasoning_completed_event_type import ReasoningCompletedEventType
from .reasoning_delta_event import ReasoningDeltaEvent
from .reasoning_delta_event_type import ReasoningDeltaEventType
from .rename_request import RenameRequest
from .resolved_by import ResolvedBy
from .restore_request import RestoreRequest
from .resync_frame import ResyncFrame
from .resync_frame_type import ResyncFrameType
from .role import Role
from .room import Room
from .room_list import RoomList
from .room_usage import RoomUsage
from .sandbox_mode import SandboxMode
from .scope import Scope
from .session import Session
from .session_completed_event import SessionCompletedEvent
from .session_completed_event_type import SessionCompletedEventType
from .session_completed_payload import SessionCompletedPayload
from .session_failed_event import SessionFailedEvent
from .session_failed_event_type import SessionFailedEventType
from .session_failed_payload import SessionFailedPayload
from .session_list import SessionList
from .session_modes import SessionModes
from .session_needs_attention_event import SessionNeedsAttentionEvent
from .session_needs_attention_event_type import SessionNeedsAttentionEventType
from .session_needs_attention_payload import SessionNeedsAttentionPayload
from .session_present import SessionPresent
from .session_settings import SessionSettings
from .session_started_event import SessionStartedEvent
from .session_started_event_type import SessionStartedEventType
from .session_started_payload import SessionStartedPayload
from .session_status import SessionStatus
from .session_updated_event import SessionUpdatedEvent
from .session_updated_event_type import SessionUpdatedEventType
from .session_updated_payload import SessionUpdatedPayload
from .session_usage import SessionUsage
from .session_usage_line import SessionUsageLine
from .session_workspace import SessionWorkspace
from .set_goal_request import SetGoalRequest
from .side_capabilities import SideCapabilities
from .side_event_frame import SideEventFrame
from .side_event_frame_type import SideEventFrameType
from .side_opened import SideOpened
from .start_session_request import StartSessionRequest
from .submit_availability import SubmitAvailability
from .submit_state import SubmitState
from .submit_turn_request import SubmitTurnRequest
from .test_delivery import TestDelivery
from .text_completed_payload import TextCompletedPayload
from .text_delta_payload import TextDeltaPayload
from .text_input import TextInput
from .text_input_type import TextInputType
from .token_info import TokenInfo
from .token_list import TokenList
from .turn_accepted import TurnAccepted
from .turn_canceled_event import TurnCanceledEvent
from .turn_canceled_event_type import TurnCanceledEventType
from .turn_canceled_payload import TurnCanceledPayload
from .turn_changes_event import TurnChangesEvent
from .turn_changes_event_type import TurnChangesEventType
from .turn_changes_payload import TurnChangesPayload
from .turn_completed_event import TurnCompletedEvent
from .turn_completed_event_type import TurnCompletedEventType
from .turn_completed_payload import TurnCompletedPayload
from .turn_failed_event import TurnFailedEvent
from .turn_failed_event_type import TurnFailedEventType
from .turn_failed_payload import TurnFailedPayload
from .turn_origin import TurnOrigin
from .turn_started_event import TurnStartedEvent
from .turn_started_event_type import TurnStartedEventType
from .turn_started_payload import TurnStartedPayload
from .turn_steered_event import TurnSteeredEvent
from .turn_steered_event_type import TurnSteeredEventType
from .turn_steered_payload import TurnSteeredPayload
from .turn_usage import TurnUsage
from .update_webhook import UpdateWebhook
from .usage_payload import UsagePayload
from .usage_totals import UsageTotals
from .usage_updated_event import UsageUpdatedEvent
from .usage_updated_event_type import UsageUpdatedEventType
from .webhook_info import WebhookInfo
from .webhook_list import WebhookList
from .workspace_changes import WorkspaceChanges
from .workspace_committed_event import WorkspaceCommittedEvent
from .workspace_committed_event_type import WorkspaceCommittedEventType
from .workspace_committed_payload import WorkspaceCommittedPayload
from .workspace_info import WorkspaceInfo
from .workspace_kind import WorkspaceKind
from .workspace_restored_event import WorkspaceRestoredEvent
from .workspace_restored_event_type import WorkspaceRestoredEventType
from .workspace_restored_payload import WorkspaceRestoredPayload
from .worktree_workspace import WorktreeWorkspace
from .worktree_workspace_kind import WorktreeWorkspaceKind

__all__ = (
    "Actor",
    "AgentInfo",
    "AgentOption",
    "AgentOptionKind",
    "AllHosts",
    "AnswerAccepted",
    "AnswerChoices",
    "AnswerRequest",
    "AnswerRequestAnswers",
    "ApprovalPolicy",
    "AuditEntry",
    "AuditList",
    "AuthState",
    "Budget",
    "BudgetExhaustedEvent",
    "BudgetExhaustedEventType",
    "BudgetExhaustedPayload",
    "BudgetState",
    "CallCompletedEvent",
    "CallCompletedEventType",
    "CallCompletedPayload",
    "CallKind",
    "CallStartedEvent",
    "CallStartedEventType",
    "CallStartedPayload",
    "CallStartedPayloadInput",
    "CallStatus",
    "CallUpdatedEvent",
    "CallUpdatedEventType",
    "CallUpdatedPayload",
    "CancelAccepted",
    "ChangedFile",
    "ChangeStatus",
    "CheckpointInfo",
    "CheckpointList",
    "CheckpointPhase",
    "CollaborationMode",
    "CommandInfo",
    "CommandsUpdatedEvent",
    "CommandsUpdatedEventType",
    "CommandsUpdatedPayload",
    "CommitAuthor",
    "CommitRequest",
    "ConfigChoice",
    "ConfigOption",
    "ConfigRequest",
    "ConfigRequestOptionsType0",
    "Cost",
    "CreatedToken",
    "CreatedWebhook",
    "CreateToken",
    "CreateWebhook",
    "CurrentPlan",
    "Decision",
    "Delivery",
    "DeliveryAttempt",
    "DeliveryList",
    "DeliveryState",
    "DirWorkspace",
    "DirWorkspaceKind",
    "ErrorBody",
    "ErrorBodyDetails",
    "ErrorFrame",
    "ErrorFrameType",
    "ErrorInfo",
    "ErrorResponse",
    "EventFrame",
    "EventFrameType",
    "EventList",
    "FileChange",
    "FileContent",
    "FileEntry",
    "FileInput",
    "FileInputType",
    "FileKind",
    "FileListing",
    "FileMatch",
    "FileSearch",
    "ForkedFrom",
    "ForkRequest",
    "GetSessionWait",
    "Goal",
    "GoalClearedEvent",
    "GoalClearedEventType",
    "GoalClearedPayload",
    "GoalOrigin",
    "GoalReconcileRequiredEvent",
    "GoalReconcileRequiredEventType",
    "GoalReconcileRequiredPayload",
    "GoalStatus",
    "GoalUpdatedEvent",
    "GoalUpdatedEventType",
    "GoalUpdatedPayload",
    "Health",
    "HelloFrame",
    "HelloFrameType",
    "ImageInput",
    "ImageInputType",
    "Interaction",
    "InteractionKind",
    "InteractionList",
    "InteractionRequestedEvent",
    "InteractionRequestedEventType",
    "InteractionRequestedPayload",
    "InteractionResolvedEvent",
    "InteractionResolvedEventType",
    "InteractionResolvedPayload",
    "InteractionResolvedPayloadAnswers",
    "Isolation",
    "IsolationMode",
    "IsolationRequest",
    "LeftWorktree",
    "LeftWorktreeList",
    "LimitsEnforcement",
    "Me",
    "MessageCompletedEvent",
    "MessageCompletedEventType",
    "MessageDeltaEvent",
    "MessageDeltaEventType",
    "ModeInfo",
    "NetworkBlockedEvent",
    "NetworkBlockedEventType",
    "NetworkBlockedPayload",
    "NoticeEvent",
    "NoticeEventType",
    "NoticeLevel",
    "NoticePayload",
    "OnExhausted",
    "OpenapiJsonResponse200",
    "OpenSideRequest",
    "OpenText",
    "OpenTextKind",
    "PingFrame",
    "PingFrameType",
    "PlanStep",
    "PlanUpdatedEvent",
    "PlanUpdatedEventType",
    "PlanUpdatedPayload",
    "PongFrame",
    "PongFrameType",
    "ProviderCapabilities",
    "ProviderInfo",
    "ProviderIsolation",
    "ProviderList",
    "ProviderSession",
    "ProviderSessionList",
    "ProviderUsage",
    "Question",
    "QuestionOption",
    "QueuedEdit",
    "QueuedTurn",
    "QueuedTurnSummary",
    "QueueList",
    "QueueOrder",
    "QueueUpdatedEvent",
    "QueueUpdatedEventType",
    "QueueUpdatedPayload",
    "ReasoningCompletedEvent",
    "ReasoningCompletedEventType",
    "ReasoningDeltaEvent",
    "ReasoningDeltaEventType",
    "RenameRequest",
    "ResolvedBy",
    "RestoreRequest",
    "ResyncFrame",
    "ResyncFrameType",
    "Role",
    "Room",
    "RoomList",
    "RoomUsage",
    "SandboxMode",
    "Scope",
    "Session",
    "SessionCompletedEvent",
    "SessionCompletedEventType",
    "SessionCompletedPayload",
    "SessionFailedEvent",
    "SessionFailedEventType",
    "SessionFailedPayload",
    "SessionList",
    "SessionModes",
    "SessionNeedsAttentionEvent",
    "SessionNeedsAttentionEventType",
    "SessionNeedsAttentionPayload",
    "SessionPresent",
    "SessionSettings",
    "SessionStartedEvent",
    "SessionStartedEventType",
    "SessionStartedPayload",
    "SessionStatus",
    "SessionUpdatedEvent",
    "SessionUpdatedEventType",
    "SessionUpdatedPayload",
    "SessionUsage",
    "SessionUsageLine",
    "SessionWorkspace",
    "SetGoalRequest",
    "SideCapabilities",
    "SideEventFrame",
    "SideEventFrameType",
    "SideOpened",
    "StartSessionRequest",
    "SubmitAvailability",
    "SubmitState",
    "SubmitTurnRequest",
    "TestDelivery",
    "TextCompletedPayload",
    "TextDeltaPayload",
    "TextInput",
    "TextInputType",
    "TokenInfo",
    "TokenList",
    "TurnAccepted",
    "TurnCanceledEvent",
    "TurnCanceledEventType",
    "TurnCanceledPayload",
    "TurnChangesEvent",
    "TurnChangesEventType",
    "TurnChangesPayload",
    "TurnCompletedEvent",
    "TurnCompletedEventType",
    "TurnCompletedPayload",
    "TurnFailedEvent",
    "TurnFailedEventType",
    "TurnFailedPayload",
    "TurnOrigin",
    "TurnStartedEvent",
    "TurnStartedEventType",
    "TurnStartedPayload",
    "TurnSteeredEvent",
    "TurnSteeredEventType",
    "TurnSteeredPayload",
    "TurnUsage",
    "UpdateWebhook",
    "UsagePayload",
    "UsageTotals",
    "UsageUpdatedEvent",
    "UsageUpdatedEventType",
    "WebhookInfo",
    "WebhookList",
    "WorkspaceChanges",
    "WorkspaceCommittedEvent",
    "WorkspaceCommittedEventType",
    "WorkspaceCommittedPayload",
    "WorkspaceInfo",
    "WorkspaceKind",
    "WorkspaceRestoredEvent",
    "WorkspaceRestoredEventType",
    "WorkspaceRestoredPayload",
    "WorktreeWorkspace",
    "WorktreeWorkspaceKind",
)
