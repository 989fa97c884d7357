; codelibrarian tags for Rust. @scope.* nodes (impl blocks) name the parent of
; the definitions inside them without being symbols themselves.

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.struct
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(macro_definition name: (identifier) @name) @definition.macro
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)]) @scope.impl

(mod_item name: (identifier) @import.mod !body)
(use_declaration argument: (_) @import.spec)
(extern_crate_declaration name: (identifier) @import.spec)

; references
(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(call_expression function: (scoped_identifier name: (identifier) @reference.call))
(macro_invocation macro: (identifier) @reference.call)
(type_identifier) @reference.type
(impl_item trait: (type_identifier) @reference.implementation)
