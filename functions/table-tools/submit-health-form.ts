import { tableTool } from './lib/table-tool.ts';

/** Records a patient's health form: one field of every data type a table tool supports. */
export default tableTool({
  toolId: 'submit-health-form',
  displayName: 'Submit health form',
  recordName: 'health form',
  description:
    "Submit a patient's health form once all its answers are collected; not for a quick mood or energy report (log-mood).",
  tableName: 'health_forms',
  fields: [
    { name: 'patient_name', label: 'Patient name', dataType: 'text', required: true, minLength: 2, maxLength: 200, example: 'Ada Lovelace' },
    { name: 'age', label: 'Age', dataType: 'integer', required: true, min: 0, max: 130, description: 'Age in whole years.', example: 36 },
    { name: 'weight_kg', label: 'Weight', dataType: 'numeric', required: true, min: 0.5, max: 500, precision: 5, scale: 2, description: 'Weight in kilograms.', example: 61.5 },
    { name: 'smoker', label: 'Smoker', dataType: 'boolean', required: true, example: false },
    { name: 'blood_type', label: 'Blood type', dataType: 'enum', required: true, enumValues: ['A+', 'A-', 'B+', 'B-', 'AB+', 'AB-', 'O+', 'O-', 'unknown'], example: 'O+' },
    { name: 'recorded_at', label: 'Recorded at', dataType: 'datetime', required: true, minDate: '1900-01-01', description: 'When the form was filled in.', example: '2025-10-05T14:30:00+02:00' },
    { name: 'symptoms', label: 'Symptoms', dataType: 'json', description: 'Structured symptoms, e.g. {"headache": {"severity": 3}}.' },
    { name: 'notes', label: 'Notes', dataType: 'text', maxLength: 2000, default: '' },
  ],
  successMessage: 'Saved health form for {patient_name} recorded at {recorded_at}',
});
