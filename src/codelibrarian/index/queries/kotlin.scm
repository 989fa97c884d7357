; codelibrarian tags for Kotlin.

(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration "class" (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(function_declaration (simple_identifier) @name) @definition.function
(type_alias (type_identifier) @name) @definition.type
(source_file
  (property_declaration (variable_declaration (simple_identifier) @name)) @definition.constant)

(import_header (identifier) @import.spec)

; references
(call_expression (simple_identifier) @reference.call)
(call_expression (navigation_expression (navigation_suffix (simple_identifier) @reference.call)))
(user_type (type_identifier) @reference.type)
(delegation_specifier (user_type (type_identifier) @reference.class))
