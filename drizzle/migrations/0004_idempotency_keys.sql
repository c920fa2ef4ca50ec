CREATE TABLE "idempotency_keys" (
	"project_id" uuid NOT NULL,
	"tool" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"status" text NOT NULL,
	"trace_id" uuid NOT NULL,
	"locked_until" timestamp with time zone,
	"response" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY("project_id","tool","key"),
	CONSTRAINT "idempotency_keys_status_check" CHECK ("idempotency_keys"."status" in ('running', 'completed'))
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");