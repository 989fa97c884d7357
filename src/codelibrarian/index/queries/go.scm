; codelibrarian tags for Go. @parent names a method's receiver type.

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration type: [(type_identifier) @parent
                                  (pointer_type (type_identifier) @parent)
                                  (generic_type type: (type_identifier) @parent)
                                  (pointer_type (generic_type type: (type_identifier) @parent))]))
  name: (field_identifier) @name) @definition.method
(type_declaration (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct)
(type_declaration (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface)
(type_declaration (type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (pointer_type) (slice_type) (map_type) (function_type) (channel_type) (array_type) (generic_type)]) @definition.type)
(type_declaration (type_alias name: (type_identifier) @name) @definition.type)
(method_elem name: (field_identifier) @name) @definition.method
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.constant))

(import_spec path: (interpreted_string_literal) @import.spec)
(import_spec path: (raw_string_literal) @import.spec)

; references
(call_expression function: (identifier) @reference.call)
(call_expression function: (selector_expression field: (field_identifier) @reference.call))
(type_identifier) @reference.type
(selector_expression operand: (identifier) field: (field_identifier) @reference.attribute)
