CREATE TABLE "chat_messages" (
	"project_id" uuid NOT NULL,
	"id" integer NOT NULL,
	"session_id" text NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"request_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chat_messages_project_id_id_pk" PRIMARY KEY("project_id","id"),
	CONSTRAINT "chat_messages_request_unique" UNIQUE("project_id","request_id"),
	CONSTRAINT "chat_messages_role_check" CHECK ("chat_messages"."role" in ('user', 'assistant', 'system', 'tool'))
);
--> statement-breakpoint
CREATE TABLE "chat_sessions" (
	"project_id" uuid NOT NULL,
	"session_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_message_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chat_sessions_project_id_session_id_pk" PRIMARY KEY("project_id","session_id")
);
--> statement-breakpoint
CREATE TABLE "flashcard_reviews" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "flashcard_reviews_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"project_id" uuid NOT NULL,
	"card_id" integer NOT NULL,
	"request_id" uuid NOT NULL,
	"rating" text NOT NULL,
	"reviewed_at" timestamp with time zone NOT NULL,
	"due" timestamp with time zone NOT NULL,
	"stability" double precision NOT NULL,
	"difficulty" double precision NOT NULL,
	"scheduled_days" integer NOT NULL,
	"reps" integer NOT NULL,
	"lapses" integer NOT NULL,
	"state" text NOT NULL,
	"ease_factor" double precision,
	CONSTRAINT "flashcard_reviews_request_unique" UNIQUE("project_id","request_id"),
	CONSTRAINT "flashcard_reviews_rating_check" CHECK ("flashcard_reviews"."rating" in ('again', 'hard', 'good', 'easy', 'manual'))
);
--> statement-breakpoint
CREATE TABLE "flashcards" (
	"project_id" uuid NOT NULL,
	"id" integer NOT NULL,
	"topic_id" integer,
	"front" text NOT NULL,
	"back" text NOT NULL,
	"due" timestamp with time zone NOT NULL,
	"stability" double precision NOT NULL,
	"difficulty" double precision NOT NULL,
	"elapsed_days" integer NOT NULL,
	"scheduled_days" integer NOT NULL,
	"learning_steps" integer NOT NULL,
	"reps" integer NOT NULL,
	"lapses" integer NOT NULL,
	"state" text NOT NULL,
	"last_review" timestamp with time zone,
	"revision" integer DEFAULT 0 NOT NULL,
	"request_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "flashcards_project_id_id_pk" PRIMARY KEY("project_id","id"),
	CONSTRAINT "flashcards_request_unique" UNIQUE("project_id","request_id"),
	CONSTRAINT "flashcards_state_check" CHECK ("flashcards"."state" in ('new', 'learning', 'review', 'relearning'))
);
--> statement-breakpoint
CREATE TABLE "quiz_attempt_deletions" (
	"project_id" uuid NOT NULL,
	"request_id" uuid NOT NULL,
	"attempt_id" integer NOT NULL,
	"deleted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "quiz_attempt_deletions_project_id_request_id_attempt_id_pk" PRIMARY KEY("project_id","request_id","attempt_id")
);
--> statement-breakpoint
CREATE TABLE "quiz_attempts" (
	"project_id" uuid NOT NULL,
	"id" integer NOT NULL,
	"topic_id" integer,
	"question" text NOT NULL,
	"user_answer" text,
	"score" double precision,
	"feedback" text,
	"request_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "quiz_attempts_project_id_id_pk" PRIMARY KEY("project_id","id"),
	CONSTRAINT "quiz_attempts_request_unique" UNIQUE("project_id","request_id"),
	CONSTRAINT "quiz_attempts_score_check" CHECK ("quiz_attempts"."score" between 0 and 1)
);
--> statement-breakpoint
CREATE TABLE "study_counters" (
	"project_id" uuid NOT NULL,
	"entity" text NOT NULL,
	"last_id" integer NOT NULL,
	CONSTRAINT "study_counters_project_id_entity_pk" PRIMARY KEY("project_id","entity"),
	CONSTRAINT "study_counters_entity_check" CHECK ("study_counters"."entity" in ('plan', 'plan_item', 'topic', 'quiz_attempt', 'flashcard', 'message'))
);
--> statement-breakpoint
CREATE TABLE "study_plan_items" (
	"project_id" uuid NOT NULL,
	"id" integer NOT NULL,
	"plan_id" integer NOT NULL,
	"position" integer NOT NULL,
	"title" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"due_date" date,
	"notes" text,
	"request_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "study_plan_items_project_id_id_pk" PRIMARY KEY("project_id","id"),
	CONSTRAINT "study_plan_items_request_unique" UNIQUE("project_id","request_id"),
	CONSTRAINT "study_plan_items_status_check" CHECK ("study_plan_items"."status" in ('pending', 'in_progress', 'completed', 'skipped'))
);
--> statement-breakpoint
CREATE TABLE "study_plans" (
	"project_id" uuid NOT NULL,
	"id" integer NOT NULL,
	"title" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"request_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "study_plans_project_id_id_pk" PRIMARY KEY("project_id","id"),
	CONSTRAINT "study_plans_request_unique" UNIQUE("project_id","request_id"),
	CONSTRAINT "study_plans_status_check" CHECK ("study_plans"."status" in ('active', 'paused', 'completed', 'archived'))
);
--> statement-breakpoint
CREATE TABLE "study_topics" (
	"project_id" uuid NOT NULL,
	"id" integer NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "study_topics_project_id_id_pk" PRIMARY KEY("project_id","id")
);
--> statement-breakpoint
ALTER TABLE "chat_messages" ADD CONSTRAINT "chat_messages_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_messages" ADD CONSTRAINT "chat_messages_project_id_session_id_chat_sessions_project_id_session_id_fk" FOREIGN KEY ("project_id","session_id") REFERENCES "public"."chat_sessions"("project_id","session_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_sessions" ADD CONSTRAINT "chat_sessions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flashcard_reviews" ADD CONSTRAINT "flashcard_reviews_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flashcard_reviews" ADD CONSTRAINT "flashcard_reviews_project_id_card_id_flashcards_project_id_id_fk" FOREIGN KEY ("project_id","card_id") REFERENCES "public"."flashcards"("project_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flashcards" ADD CONSTRAINT "flashcards_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flashcards" ADD CONSTRAINT "flashcards_project_id_topic_id_study_topics_project_id_id_fk" FOREIGN KEY ("project_id","topic_id") REFERENCES "public"."study_topics"("project_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quiz_attempt_deletions" ADD CONSTRAINT "quiz_attempt_deletions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quiz_attempts" ADD CONSTRAINT "quiz_attempts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quiz_attempts" ADD CONSTRAINT "quiz_attempts_project_id_topic_id_study_topics_project_id_id_fk" FOREIGN KEY ("project_id","topic_id") REFERENCES "public"."study_topics"("project_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_counters" ADD CONSTRAINT "study_counters_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_plan_items" ADD CONSTRAINT "study_plan_items_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_plan_items" ADD CONSTRAINT "study_plan_items_project_id_plan_id_study_plans_project_id_id_fk" FOREIGN KEY ("project_id","plan_id") REFERENCES "public"."study_plans"("project_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_plans" ADD CONSTRAINT "study_plans_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_topics" ADD CONSTRAINT "study_topics_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chat_messages_session_idx" ON "chat_messages" USING btree ("project_id","session_id","id");--> statement-breakpoint
CREATE INDEX "flashcard_reviews_card_idx" ON "flashcard_reviews" USING btree ("project_id","card_id");--> statement-breakpoint
CREATE INDEX "flashcards_due_idx" ON "flashcards" USING btree ("project_id","due","id");--> statement-breakpoint
CREATE INDEX "quiz_attempts_topic_idx" ON "quiz_attempts" USING btree ("project_id","topic_id","id");--> statement-breakpoint
CREATE INDEX "study_plan_items_plan_idx" ON "study_plan_items" USING btree ("project_id","plan_id","position");--> statement-breakpoint
CREATE INDEX "study_plan_items_title_idx" ON "study_plan_items" USING btree ("project_id",lower("title"));--> statement-breakpoint
CREATE INDEX "study_plans_title_idx" ON "study_plans" USING btree ("project_id",lower("title"));--> statement-breakpoint
CREATE UNIQUE INDEX "study_topics_name_unique" ON "study_topics" USING btree ("project_id",lower("name"));